import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Project } from 'ts-morph';
import { afterAll, describe, expect, it } from 'vitest';
import { runCodemod, MARKER_PREFIX } from '../../codemods/index.js';
import { ReexportIndex } from '../../codemods/reexports.js';
import { runFile } from '../../codemods/session.js';
import type { Transform } from '../../codemods/transforms/types.js';
import { snapshot } from './support.js';

const OLD_API = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'runner-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8080/mcp')));
export const task = await client.experimental.tasks.getTask('t-1');
export const listed = await client.experimental.tasks.listTasks();
`;

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempTree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'codemod-runner-'));
  temps.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const quiet = { stdout: () => {}, stderr: () => {} };

describe('runCodemod', () => {
  it('dry run writes nothing, prints a unified diff per changed file and counts it in the summary', async () => {
    const dir = tempTree({ 'a.ts': OLD_API, 'b.ts': OLD_API.replace('runner-test', 'b'), 'plain.ts': 'export const x = 1;\n' });
    const before = snapshot(dir);
    let out = '';
    const { report, exitCode } = await runCodemod({ path: dir, dryRun: true, stdout: (t) => (out += t), stderr: () => {} });
    expect(exitCode).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    expect(out).toContain('--- a/a.ts\n+++ b/a.ts\n@@ ');
    expect(out).toContain('--- a/b.ts\n+++ b/b.ts\n@@ ');
    expect(out).toContain("+export const task = await tasksClient.getTask('t-1');");
    expect(out).toContain("-export const task = await client.experimental.tasks.getTask('t-1');");
    expect(out).not.toContain('plain.ts');
    expect(report.summary).toMatchObject({ dryRun: true, filesScanned: 3, filesMatched: 2, filesParsed: 2, filesChanged: 2 });
    expect(report.changedFiles).toEqual(['a.ts', 'b.ts']);
  });

  it('with noTodos leaves no marker in the code but keeps the report rows', async () => {
    const dir = tempTree({ 'a.ts': OLD_API });
    const { report } = await runCodemod({ path: dir, noTodos: true, force: true, ...quiet });
    const text = readFileSync(join(dir, 'a.ts'), 'utf8');
    expect(text).not.toContain(MARKER_PREFIX);
    expect(text).toContain("await tasksClient.getTask('t-1')");
    expect(report.rows.filter((r) => r.action === 'marked').map((r) => r.code)).toEqual(['tasks-list']);
    const row = report.rows.find((r) => r.action === 'marked')!;
    // Where the call is in the rewritten file (the TasksClient construction moved it down).
    expect(text.split('\n')[row.line - 1]!.slice(row.column - 1)).toMatch(/^client\.experimental\.tasks\.listTasks\(\)/);
    expect(row).toMatchObject({ file: 'a.ts', transform: 'list-tasks' });
    expect(row.message).toContain('tasks/list is gone in SEP-2663');
  });

  it('runs only the selected transforms', async () => {
    const dir = tempTree({ 'a.ts': OLD_API });
    const { report } = await runCodemod({ path: dir, transforms: ['list-tasks'], force: true, ...quiet });
    const text = readFileSync(join(dir, 'a.ts'), 'utf8');
    expect(text).toContain("client.experimental.tasks.getTask('t-1')");
    expect(text).toContain(`// ${MARKER_PREFIX}(tasks-list):`);
    expect(report.summary.transforms).toEqual(['list-tasks']);
  });

  it('skips node_modules, build output and declaration files, and never follows symlinks', async () => {
    const dir = tempTree({
      'src/a.ts': OLD_API,
      'node_modules/pkg/index.ts': OLD_API,
      'dist/a.js': OLD_API,
      'build/a.js': OLD_API,
      'out/a.js': OLD_API,
      'src/types.d.ts': OLD_API,
      'outside/real.ts': OLD_API,
      'src/notes.md': OLD_API,
    });
    symlinkSync(join(dir, 'outside'), join(dir, 'src/linked-dir'));
    symlinkSync(join(dir, 'outside/real.ts'), join(dir, 'src/linked-file.ts'));
    const { report } = await runCodemod({ path: join(dir, 'src'), force: true, ...quiet });
    expect(report.changedFiles).toEqual(['a.ts']);
    expect(report.summary.symlinksSkipped).toBe(2);
    for (const untouched of ['node_modules/pkg/index.ts', 'dist/a.js', 'build/a.js', 'out/a.js', 'src/types.d.ts', 'outside/real.ts', 'src/notes.md']) {
      expect(readFileSync(join(dir, untouched), 'utf8'), untouched).toBe(OLD_API);
    }
    const whole = await runCodemod({ path: dir, dryRun: true, ...quiet });
    expect(whole.report.summary.filesScanned).toBe(2); // src/a.ts (already migrated) and outside/real.ts
  });

  it('never parses a file without a trigger string (a broken file that cannot matter is not even reported)', async () => {
    const dir = tempTree({ 'broken.ts': 'export const = ;\n', 'a.ts': OLD_API });
    const { report, exitCode } = await runCodemod({ path: dir, force: true, ...quiet });
    expect(exitCode).toBe(0);
    expect(report.summary).toMatchObject({ filesScanned: 2, filesMatched: 1, filesParsed: 1, filesWithErrors: 0 });
  });

  it('gives the same result whatever the chunk size (a fresh ts-morph project per chunk)', async () => {
    const files = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}.ts`, OLD_API.replace('runner-test', `f${i}`)]));
    const one = tempTree(files);
    const many = tempTree(files);
    await runCodemod({ path: one, chunkSize: 1, force: true, ...quiet });
    await runCodemod({ path: many, chunkSize: 100, force: true, ...quiet });
    expect(snapshot(one)).toEqual(snapshot(many));
  });

  it('accepts a single file as the path', async () => {
    const dir = tempTree({ 'a.ts': OLD_API, 'b.ts': OLD_API });
    const { report } = await runCodemod({ path: join(dir, 'a.ts'), force: true, ...quiet });
    expect(report.changedFiles).toEqual(['a.ts']);
    expect(readFileSync(join(dir, 'b.ts'), 'utf8')).toBe(OLD_API);
  });

  it('keeps a byte-order mark and CRLF line endings', async () => {
    const crlf = `\ufeff${OLD_API.replace(/\n/g, '\r\n')}`;
    const dir = tempTree({ 'a.ts': crlf });
    await runCodemod({ path: dir, force: true, ...quiet });
    const text = readFileSync(join(dir, 'a.ts'), 'utf8');
    expect(text.startsWith('\ufeff')).toBe(true);
    expect(text).toContain('tasksClient.getTask(');
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
  });

  it('leaves no temporary file behind after writing', async () => {
    const dir = tempTree({ 'a.ts': OLD_API });
    await runCodemod({ path: dir, force: true, ...quiet });
    expect(Object.keys(Object.fromEntries(snapshot(dir)))).toEqual(['a.ts']);
  });
});

describe('one file is atomic', () => {
  const reexports = new ReexportIndex();
  const explode: Transform = {
    name: 'explode',
    description: 'throws after it planned an edit',
    phase: 1,
    triggers: ['experimental'],
    run(ctx) {
      ctx.edit(0, 0, '// half-done\n');
      throw new Error('boom');
    },
  };

  it('a transform that throws leaves the file untouched and is reported; the next file still runs', async () => {
    const project = new Project({ useInMemoryFileSystem: true });
    const { TRANSFORMS } = await import('../../codemods/registry.js');
    const broken = runFile(project, '/virtual/a.ts', OLD_API, { transforms: [...TRANSFORMS.slice(0, 3), explode], finishing: [], noTodos: false, reexports });
    expect(broken.failed).toBe(true);
    expect(broken.output).toBe(OLD_API);
    expect(broken.rows).toEqual([expect.objectContaining({ code: 'transform-error', transform: 'explode', line: 1, column: 1 })]);
    expect(broken.rows[0]!.message).toContain('boom');
    const fine = runFile(project, '/virtual/b.ts', OLD_API, { transforms: TRANSFORMS, finishing: [], noTodos: false, reexports });
    expect(fine.failed).toBe(false);
    expect(fine.output).toContain('tasksClient.getTask(');
    expect(existsSync('/virtual')).toBe(false);
  });

  it('a transform whose output does not parse is refused the same way', () => {
    const project = new Project({ useInMemoryFileSystem: true });
    const garbage: Transform = {
      name: 'garbage',
      description: 'writes code that does not parse, once',
      phase: 1,
      triggers: ['experimental'],
      run: (ctx) => void (ctx.text.startsWith('export const = ;') || ctx.edit(0, 0, 'export const = ;\n')),
    };
    const result = runFile(project, '/virtual/c.ts', OLD_API, { transforms: [garbage], finishing: [], noTodos: false, reexports });
    expect(result.failed).toBe(true);
    expect(result.output).toBe(OLD_API);
    expect(result.rows[0]).toMatchObject({ code: 'transform-error', transform: 'garbage' });
    expect(result.rows[0]!.message).toContain('does not parse');
  });
});
