import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';
import { listFiles, ROOT, typeCheck } from './support.js';

const EXAMPLE = join(ROOT, 'test/fixtures/codemod-example-repo');
const RUN_TIMEOUT_MS = 90_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its exit, bounded (a process still running at the bound is killed and fails the test). */
function run(args: string[], cwd: string): Promise<Run> {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} still running after ${RUN_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A copy of the example repo whose node_modules point at this checkout's packages (the SDK, zod, tsx, and this package). */
function copyExample(): string {
  const dir = mkdtempSync(join(tmpdir(), 'codemod-example-'));
  cpSync(EXAMPLE, dir, { recursive: true });
  mkdirSync(join(dir, 'node_modules/@modelcontextprotocol'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules/@modelcontextprotocol/sdk'), join(dir, 'node_modules/@modelcontextprotocol/sdk'));
  for (const pkg of ['zod', 'tsx']) symlinkSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', pkg));
  symlinkSync(ROOT, join(dir, 'node_modules/mcp-tasks-shim'));
  return dir;
}

function outcomes(result: Run): unknown {
  expect(result.code, result.stderr).toBe(0);
  const line = result.stdout.trim().split('\n').at(-1)!;
  return JSON.parse(line);
}

let shim: ShimProcess;
let dir: string;
let before: unknown;
let codemod: Run;

beforeAll(async () => {
  shim = await startShimProcess({ SHIM_POLL_INTERVAL_MS: '200' });
  dir = copyExample();
  // The old client, against the shim's legacy wires: what "as before" means.
  before = outcomes(await run(['--import', 'tsx', 'src/main.ts', shim.url], dir));
  codemod = await run(['bin/mcp-tasks-shim.js', 'codemod', dir, '--report', join(dir, 'report.json')], ROOT);
}, 4 * RUN_TIMEOUT_MS);

afterAll(async () => {
  await shim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the codemod on a copy of an example client written for the old tasks APIs', () => {
  it('ran the real CLI and rewrote both clients (the SDK one through a local re-export module)', () => {
    expect(codemod.code, codemod.stderr).toBe(0);
    expect(codemod.stdout).toContain('rewrote src/sdk-client.ts');
    expect(codemod.stdout).toContain('rewrote src/dialect-client.ts');
    expect(codemod.stdout).not.toContain('rewrote src/mcp.ts');
    expect(codemod.stdout).not.toContain('rewrote src/outcome.ts');
  });

  it('left no old tasks API and no tasks/create-dialect request behind', () => {
    for (const file of ['src/sdk-client.ts', 'src/dialect-client.ts']) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text).toContain("from 'mcp-tasks-shim/client'");
      expect(text).toContain('new TasksClient(');
      expect(text).toContain('onInputRequest:');
      expect(text).not.toMatch(/\.experimental\.tasks\.|method: 'tasks\/|setRequestHandler\(/);
    }
  });

  it('reported what is left for a person in the JSON report', () => {
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { rows: Array<{ file: string; code: string; action: string; kind: string }> };
    const marked = report.rows.filter((r) => r.action === 'marked');
    expect(marked.map((r) => `${r.file}:${r.code}`).sort()).toEqual(['src/dialect-client.ts:old-task-fields', 'src/dialect-client.ts:sdk-client-unused', 'src/sdk-client.ts:sdk-client-unused']);
    // Every other row is a site the codemod rewrote, with the kind of site it was.
    expect(report.rows.filter((r) => r.action !== 'marked').every((r) => r.action === 'rewritten' && r.code === 'rewritten')).toBe(true);
    expect(report.rows.filter((r) => r.action === 'rewritten').length).toBeGreaterThan(3);
    for (const row of report.rows) expect(Object.keys(row).sort()).toEqual(['action', 'code', 'column', 'file', 'kind', 'line', 'message', 'reason', 'transform']);
  });

  it('type-checks after the migration', () => {
    const files = listFiles(join(dir, 'src')).map((f) => join(dir, 'src', f));
    const failures = [...typeCheck(files)].filter(([, list]) => list.length > 0);
    expect(failures).toEqual([]);
  }, 60_000);

  it('behaves as before against the shim: slow_compute, confirm_delete answered through the handler, and a cancel', async () => {
    const after = outcomes(await run(['--import', 'tsx', 'src/main.ts', shim.url], dir));
    expect(after).toEqual(before);
    expect(after).toEqual({
      sdk: {
        slow_compute: { asked: [], text: 'Computed result after 1s' },
        confirm_delete: { asked: ['Delete notes.txt?'], text: 'Deleted notes.txt' },
        cancel: { asked: [], error: 'cancelled' },
      },
      dialect: {
        slow_compute: { asked: [], text: 'Computed result after 1s' },
        confirm_delete: { asked: ['Delete notes.txt?'], text: 'Deleted notes.txt' },
        cancel: { asked: [], error: 'cancelled' },
      },
    });
  }, 2 * RUN_TIMEOUT_MS);

  it('changes nothing when run a second time', async () => {
    const again = await run(['bin/mcp-tasks-shim.js', 'codemod', dir], ROOT);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('rewrote');
    expect(again.stdout).toMatch(/0 changed/);
  });
});
