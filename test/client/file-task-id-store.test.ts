import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptTaskIdStoreError, FileTaskIdStore } from '../../packages/client/src/node.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-store-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entry = (n: number) => ({ taskId: `task-${n}`, tool: 'slow_compute', createdAt: `2026-07-28T10:00:${String(n % 60).padStart(2, '0')}.000Z` });

describe('FileTaskIdStore', () => {
  it('treats a missing file (and a missing directory) as an empty list', async () => {
    expect(await new FileTaskIdStore(join(dir, 'nope', 'tasks.json')).list()).toEqual([]);
  });

  it('saves, replaces, removes, and survives a new instance (a restart)', async () => {
    const path = join(dir, 'nested', 'tasks.json');
    const store = new FileTaskIdStore(path);
    await store.save(entry(1));
    await store.save(entry(2));
    await store.save({ ...entry(1), tool: 'run_ci_pipeline' });
    await store.remove('task-2');
    await store.remove('never-saved');

    const restarted = new FileTaskIdStore(path);
    expect(await restarted.list()).toEqual([{ ...entry(1), tool: 'run_ci_pipeline' }]);
  });

  it('keeps every change of many concurrent saves and removes', async () => {
    const path = join(dir, 'tasks.json');
    const store = new FileTaskIdStore(path);
    await Promise.all(Array.from({ length: 40 }, (_, n) => store.save(entry(n))));
    await Promise.all(Array.from({ length: 20 }, (_, n) => store.remove(`task-${n * 2}`)));
    const ids = (await new FileTaskIdStore(path).list()).map((e) => e.taskId).sort();
    expect(ids).toEqual(Array.from({ length: 20 }, (_, n) => `task-${n * 2 + 1}`).sort());
  });

  it('writes atomically: a reader never sees a partial file, and no temporary file is left', async () => {
    const path = join(dir, 'tasks.json');
    const store = new FileTaskIdStore(path);
    await store.save(entry(0));
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        const text = await readFile(path, 'utf8');
        expect(() => JSON.parse(text)).not.toThrow();
        reads++;
      }
    })();
    for (let n = 1; n <= 60; n++) await store.save(entry(n));
    writing = false;
    await reader;

    expect(reads).toBeGreaterThan(0);
    expect(await readdir(dir)).toEqual(['tasks.json']);
    expect(await store.list()).toHaveLength(61);
  });

  it('refuses a corrupt file with a clear error and leaves it untouched', async () => {
    const path = join(dir, 'tasks.json');
    await writeFile(path, '{"version":1,"tasks":[{"taskId":');
    const store = new FileTaskIdStore(path);
    await expect(store.list()).rejects.toThrow(CorruptTaskIdStoreError);
    await expect(store.list()).rejects.toThrow(`${path} is corrupt (not JSON`);
    await expect(store.save(entry(1))).rejects.toThrow(CorruptTaskIdStoreError);
    expect(await readFile(path, 'utf8')).toBe('{"version":1,"tasks":[{"taskId":');
  });

  it.each([
    ['[]', 'not a JSON object'],
    ['{"version":2,"tasks":[]}', 'unknown version 2'],
    ['{"version":1}', '"tasks" is not an array'],
    ['{"version":1,"tasks":[{"taskId":"a","tool":"t"}]}', 'tasks[0] must be'],
  ])('names the problem in %s', async (content, problem) => {
    const path = join(dir, 'tasks.json');
    await writeFile(path, content);
    await expect(new FileTaskIdStore(path).list()).rejects.toThrow(problem);
  });

  it('a failed change does not block the next one', async () => {
    const path = join(dir, 'tasks.json');
    await writeFile(path, 'garbage');
    const store = new FileTaskIdStore(path);
    await expect(store.save(entry(1))).rejects.toThrow(CorruptTaskIdStoreError);
    await rm(path);
    await store.save(entry(2));
    expect(await store.list()).toEqual([entry(2)]);
  });
});
