import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCodemod } from '../../codemods/index.js';
import { fixtureCases, listFiles, snapshot, tempCopy, typeCheck } from './support.js';

const cases = fixtureCases();
const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const quiet = { stdout: () => {}, stderr: () => {} };

describe.each(cases.map((c) => [`${c.transform}/${c.name}`, c] as const))('codemod fixture %s', (_label, fixture) => {
  it(fixture.output ? 'rewrites the input into the expected output, byte for byte' : 'leaves the input byte-identical (negative fixture)', async () => {
    const dir = tempCopy(fixture.input);
    temps.push(dir);
    const { exitCode } = await runCodemod({ path: dir, force: true, transforms: fixture.config.transforms, noTodos: fixture.config.noTodos, ...quiet });
    expect(exitCode).toBe(0);
    const expected = snapshot(fixture.output ?? fixture.input);
    const actual = snapshot(dir);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [file, bytes] of expected) expect(actual.get(file)!.toString('latin1'), file).toBe(bytes.toString('latin1'));
  });

  it('changes nothing when run again on its own output (idempotent)', async () => {
    const dir = tempCopy(fixture.output ?? fixture.input);
    temps.push(dir);
    const before = snapshot(dir);
    const { report } = await runCodemod({ path: dir, force: true, transforms: fixture.config.transforms, noTodos: fixture.config.noTodos, ...quiet });
    expect(report.summary.filesChanged).toBe(0);
    const after = snapshot(dir);
    for (const [file, bytes] of before) expect(after.get(file)!.equals(bytes), file).toBe(true);
  });
});

describe('migrated TypeScript fixtures', () => {
  const outputs = cases.filter((c) => c.output).flatMap((c) => listFiles(c.output!).filter((f) => /\.[cm]?tsx?$/.test(f) && !f.endsWith('.d.ts')).map((f) => join(c.output!, f)));

  it('exist for most transforms', () => {
    expect(outputs.length).toBeGreaterThan(10);
  });

  it('type-check against the client helper (mcp-tasks-shim/client → packages/client/src/index.ts)', () => {
    const diagnostics = typeCheck(outputs);
    const failures = [...diagnostics].filter(([, list]) => list.length > 0).map(([file, list]) => `${file}\n  ${list.join('\n  ')}`);
    expect(failures, failures.join('\n')).toEqual([]);
  }, 120_000);

  it('actually use the client helper where they were rewritten', () => {
    const migrated = outputs.filter((f) => readFileSync(f, 'utf8').includes('new TasksClient('));
    expect(migrated.length).toBeGreaterThan(5);
  });
});
