import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../../codemods/run.js';
import { runCollecting, tempRepo } from './support.js';

const CLIENT_FILE = `import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export async function statusOf(client: Client, taskId: string): Promise<string> {
  const task = await client.experimental.tasks.getTask(taskId);
  return task.status;
}
`;
const REWRITTEN_CALL = 'await tasksClientFor(client).getTask(taskId)';
const TSCONFIG = JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true } });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary repo with `files`, resolving the SDK from this repository's node_modules. */
function repo(files: Record<string, string>): string {
  const dir = tempRepo('codemod-bad-input-', files, { nodeModules: true });
  dirs.push(dir);
  return dir;
}

const run = runCollecting;

describe('codemod on bad input', () => {
  it('reports a broken tsconfig.json and migrates its files without types', async () => {
    const dir = repo({ 'tsconfig.json': '{ "compilerOptions": { "strict": true, ', 'src/status.ts': CLIENT_FILE });
    const { report, exitCode, stderr } = await run(dir);
    expect(exitCode).toBe(0);
    expect(report.rows).toContainEqual(expect.objectContaining({ file: 'tsconfig.json', code: 'tsconfig-error' }));
    expect(stderr).toMatch(/tsconfig\.json: broken tsconfig .*analysed without types/);
    expect(report.summary.filesTyped).toBe(0);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);

  it('uses the nearest tsconfig.json of each package of a monorepo, and reports only the broken one', async () => {
    const dir = repo({
      'packages/a/tsconfig.json': TSCONFIG,
      'packages/a/src/status.ts': CLIENT_FILE,
      'packages/b/tsconfig.json': JSON.stringify({ extends: './missing-base.json' }),
      'packages/b/src/status.ts': CLIENT_FILE,
      'packages/c/tsconfig.json': TSCONFIG,
      'packages/c/src/status.ts': CLIENT_FILE,
    });
    const { report, exitCode } = await run(dir);
    expect(exitCode).toBe(0);
    expect(report.summary.filesTyped).toBe(2);
    expect(report.rows.filter((r) => r.code === 'tsconfig-error').map((r) => r.file)).toEqual(['packages/b/tsconfig.json']);
    for (const pkg of ['a', 'b', 'c']) expect(readFileSync(join(dir, `packages/${pkg}/src/status.ts`), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);

  it('asks no type checker with --no-types', async () => {
    const dir = repo({ 'tsconfig.json': TSCONFIG, 'src/status.ts': CLIENT_FILE });
    const { report } = await run(dir, { noTypes: true });
    expect(report.summary.filesTyped).toBe(0);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);

  it('never follows a symlink out of the tree, says so in the report, and goes on', async () => {
    const outside = repo({ 'elsewhere.ts': CLIENT_FILE });
    const dir = repo({ 'src/status.ts': CLIENT_FILE });
    symlinkSync(join(outside, 'elsewhere.ts'), join(dir, 'src/linked.ts'));
    const { report, exitCode } = await run(dir);
    expect(exitCode).toBe(0);
    expect(report.rows).toContainEqual(expect.objectContaining({ file: 'src/linked.ts', code: 'symlink-skipped', message: expect.stringContaining('outside the tree') }));
    expect(readFileSync(join(outside, 'elsewhere.ts'), 'utf8')).toBe(CLIENT_FILE);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);

  it('skips a file over 1 MB with a report row and a stderr line, and migrates the rest', async () => {
    const big = `${CLIENT_FILE}${'// padding\n'.repeat(Math.ceil(MAX_FILE_BYTES / 11) + 1)}`;
    const dir = repo({ 'src/big.ts': big, 'src/status.ts': CLIENT_FILE });
    const { report, exitCode, stderr } = await run(dir);
    expect(exitCode).toBe(1);
    expect(report.rows).toContainEqual(expect.objectContaining({ file: 'src/big.ts', code: 'too-large' }));
    expect(stderr).toMatch(/src\/big\.ts: 1\.0 MB: over the 1 MB limit/);
    expect(readFileSync(join(dir, 'src/big.ts'), 'utf8')).toBe(big);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);

  it('skips a file that does not parse under a tsconfig and migrates the rest with types', async () => {
    const dir = repo({ 'tsconfig.json': TSCONFIG, 'src/broken.ts': `${CLIENT_FILE}\nexport const x = client.experimental.tasks.getTask(;\n`, 'src/status.ts': CLIENT_FILE });
    const { report, exitCode } = await run(dir);
    expect(exitCode).toBe(1);
    expect(report.rows).toContainEqual(expect.objectContaining({ file: 'src/broken.ts', code: 'parse-error' }));
    expect(report.summary.filesTyped).toBe(1);
    expect(readFileSync(join(dir, 'src/status.ts'), 'utf8')).toContain(REWRITTEN_CALL);
  }, 120_000);
});
