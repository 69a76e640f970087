import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRANSFORMS } from '../../codemods/index.js';
import { ROOT } from './support.js';

const OLD_API = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'cli-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8080/mcp')));
export const task = await client.experimental.tasks.getTask('t-1');
`;

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'codemod-cli-'));
  temps.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['bin/mcp-tasks-shim.js', 'codemod', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`codemod ${args.join(' ')} did not exit; stderr: ${stderr}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function git(dir: string, ...args: string[]): void {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

describe('mcp-tasks-shim codemod (the real CLI)', () => {
  it('reports a broken tsconfig.json on stderr and in the summary, and with --no-types reads no tsconfig at all', async () => {
    const dir = tempDir({ 'tsconfig.json': '{ "compilerOptions": ', 'client.ts': OLD_API });
    const typed = await cli([dir, '--dry-run']);
    expect(typed.code).toBe(0);
    expect(typed.stderr).toMatch(/tsconfig\.json: broken tsconfig .*analysed without types/);
    expect(typed.stdout).toMatch(/0 analysed with types/);
    const plain = await cli([dir, '--dry-run', '--no-types']);
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toMatch(/tsconfig/);
    expect(plain.stdout).toContain('tasksClient.getTask(');
  });

  it('answers a path that does not exist with a clear message and exit status 2', async () => {
    const missing = join(tmpdir(), 'codemod-no-such-dir-0a9f', 'src');
    const result = await cli([missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${missing}: no such file or directory`);
    expect(result.stdout).toBe('');
  });

  it('reports a file that does not parse, skips it, and still migrates the others (exit status 1)', async () => {
    const dir = tempDir({ 'broken.ts': `${OLD_API}\nexport const x = client.experimental.tasks.getTask(;\n`, 'good.ts': OLD_API });
    const result = await cli([dir, '--report', join(dir, 'report.json')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/broken\.ts:8:\d+: does not parse \(.*\); skipped/);
    expect(readFileSync(join(dir, 'broken.ts'), 'utf8')).toBe(`${OLD_API}\nexport const x = client.experimental.tasks.getTask(;\n`);
    expect(readFileSync(join(dir, 'good.ts'), 'utf8')).toContain('await tasksClient.getTask(');
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { summary: { filesChanged: number; filesWithErrors: number }; rows: Array<{ file: string; code: string; transform: string }> };
    expect(report.summary).toMatchObject({ filesChanged: 1, filesWithErrors: 1 });
    expect(report.rows).toContainEqual(expect.objectContaining({ file: 'broken.ts', code: 'parse-error', transform: 'parser' }));
  });

  it('refuses a dirty git tree unless --force, and dry-runs it without asking', async () => {
    const dir = tempDir({ 'client.ts': OLD_API });
    git(dir, 'init', '-q');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'old client');
    writeFileSync(join(dir, 'client.ts'), `${OLD_API}// local edit\n`);

    const refused = await cli([dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('refusing to rewrite a dirty git tree');
    expect(refused.stderr).toContain('client.ts');
    expect(refused.stderr).toContain('--force');
    expect(readFileSync(join(dir, 'client.ts'), 'utf8')).toBe(`${OLD_API}// local edit\n`);

    const preview = await cli([dir, '--dry-run']);
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain('+++ b/client.ts');
    expect(readFileSync(join(dir, 'client.ts'), 'utf8')).toBe(`${OLD_API}// local edit\n`);

    const forced = await cli([dir, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(join(dir, 'client.ts'), 'utf8')).toContain('new TasksClient(');
  });

  it('writes the --report file in a dry run and leaves the source files as they were', async () => {
    const dir = tempDir({ 'client.ts': OLD_API });
    const reportFile = join(dir, 'report.json');
    const result = await cli([dir, '--dry-run', '--report', reportFile]);
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'client.ts'), 'utf8')).toBe(OLD_API);
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { summary: { filesChanged: number }; changedFiles: string[] };
    expect(report.summary.filesChanged).toBe(1);
    expect(report.changedFiles).toEqual(['client.ts']);
  });

  it('runs on a clean git tree without --force', async () => {
    const dir = tempDir({ 'client.ts': OLD_API });
    git(dir, 'init', '-q');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'old client');
    const result = await cli([dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('rewrote client.ts');
  });

  it('lists every transform with --list', async () => {
    const result = await cli(['--list']);
    expect(result.code).toBe(0);
    for (const t of TRANSFORMS) expect(result.stdout).toContain(t.name);
  });

  it('refuses an unknown transform and an unknown option with exit status 2', async () => {
    const dir = tempDir({ 'client.ts': OLD_API });
    const unknown = await cli([dir, '--transforms', 'get-task,no-such-transform']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown transform: no-such-transform');
    const option = await cli([dir, '--frobnicate']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('unknown option --frobnicate');
    expect(readFileSync(join(dir, 'client.ts'), 'utf8')).toBe(OLD_API);
  });

  it('is reachable from the main usage text', async () => {
    const child = spawnSync(process.execPath, ['bin/mcp-tasks-shim.js', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(child.stdout).toContain('mcp-tasks-shim codemod <path>');
  });
});
