import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, runCollecting, tempRepo } from './support.js';

/** A client file in the codemod's default style (semicolons, single quotes), with one call to rewrite. */
const CLIENT_FILE = `import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export async function statusOf(client: Client, taskId: string): Promise<string> {
  const task = await client.experimental.tasks.getTask(taskId);
  return task.status;
}
`;
const PRETTIER = join(ROOT, 'node_modules/.bin/prettier');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary repo with `files`; with `installed`, its node_modules (this repository's) hold Prettier. */
function repo(files: Record<string, string>, installed: boolean): string {
  const dir = tempRepo('codemod-prettier-', files, { nodeModules: installed });
  dirs.push(dir);
  return dir;
}

const run = runCollecting;

/** Prettier's own verdict on a file under the repo's config: true when it is formatted. */
function prettierAccepts(dir: string, file: string): boolean {
  return spawnSync(PRETTIER, ['--check', file], { cwd: dir, encoding: 'utf8' }).status === 0;
}

describe("the codemod and the repo's Prettier", () => {
  it('runs Prettier on the files it changed when the repo has a config and Prettier installed, and says so', async () => {
    const dir = repo({ '.prettierrc': '{ "semi": false, "printWidth": 60 }\n', 'src/status.ts': CLIENT_FILE, 'src/other.ts': 'const untouched = {a:1};\n' }, true);
    const { report, exitCode, stderr } = await run(dir);
    expect(exitCode).toBe(0);
    expect(stderr).toBe('');
    expect(report.summary.prettier).toBe('ran on 1 changed file');
    const text = readFileSync(join(dir, 'src/status.ts'), 'utf8');
    expect(text).toContain('tasksClientFor(client).getTask(taskId)');
    // The repo's config decided the layout: no semicolons, lines cut at 60 columns.
    expect(text).not.toMatch(/;\n/);
    expect(prettierAccepts(dir, 'src/status.ts')).toBe(true);
    // A file the codemod did not change is not Prettier's business here.
    expect(readFileSync(join(dir, 'src/other.ts'), 'utf8')).toBe('const untouched = {a:1};\n');
  }, 120_000);

  it('formats like the file around it when the repo has Prettier but no config', async () => {
    const dir = repo({ 'src/status.ts': CLIENT_FILE }, true);
    const { report } = await run(dir);
    expect(report.summary.prettier).toBe('not run: no Prettier config with Prettier installed');
    const text = readFileSync(join(dir, 'src/status.ts'), 'utf8');
    expect(text).toContain("import { tasksClientFor } from 'mcp-tasks-shim/client';\n");
    expect(text).toContain('  const task = await tasksClientFor(client).getTask(taskId);\n');
  }, 120_000);

  it('formats like the file around it when the repo configures Prettier but does not install it', async () => {
    const dir = repo({ '.prettierrc': '{ "semi": false }\n', 'src/status.ts': CLIENT_FILE }, false);
    const { report } = await run(dir);
    expect(report.summary.filesChanged).toBe(1);
    expect(report.summary.prettier).toBe('not run: no Prettier config with Prettier installed');
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain('  const task = await tasksClientFor(client).getTask(taskId);\n');
  }, 120_000);

  it('keeps the rewrite and says what Prettier rejected when the repo config is invalid', async () => {
    const dir = repo({ '.prettierrc': '{ "tabWidth": "banana" }\n', 'src/status.ts': CLIENT_FILE }, true);
    const { report, exitCode, stderr } = await run(dir);
    expect(exitCode).toBe(0);
    expect(report.summary.prettier).toMatch(/^failed \(exit 1: Invalid tabWidth value\. Expected an integer, but received "banana"\.\): the rewritten files are written, not formatted by Prettier$/);
    expect(stderr).toContain(`mcp-tasks-shim codemod: prettier ${report.summary.prettier}\n`);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain('  const task = await tasksClientFor(client).getTask(taskId);\n');
  }, 120_000);

  it('keeps the rewrite and says so when the repo config does not parse', async () => {
    const dir = repo({ '.prettierrc': '{ "semi": false\n', 'src/status.ts': CLIENT_FILE }, true);
    const { report } = await run(dir);
    expect(report.summary.prettier).toMatch(/^failed \(exit 2: Invalid configuration for file ".*status\.ts": YAML Error in ".*\.prettierrc":\): the rewritten files are written/);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain('tasksClientFor(client).getTask(taskId)');
  }, 120_000);

  it('does not run Prettier in a dry run', async () => {
    const dir = repo({ '.prettierrc': '{ "semi": false }\n', 'src/status.ts': CLIENT_FILE }, true);
    const { report } = await run(dir, { dryRun: true });
    expect(report.summary.prettier).toBe('not run: dry run');
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toBe(CLIENT_FILE);
  }, 120_000);
});
