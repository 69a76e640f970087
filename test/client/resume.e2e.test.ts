import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpRequestError, TasksClient } from '../../packages/client/src/index.js';
import { FileTaskIdStore } from '../../packages/client/src/node.js';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';

let shim: ShimProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-resume-'));
  shim = await startShimProcess({ SHIM_POLL_INTERVAL_MS: '200' });
});

afterAll(async () => {
  await shim?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('resuming after a restart', () => {
  it('a new client with the same FileTaskIdStore drives the task a dropped client started', async () => {
    const path = join(dir, 'tasks.json');
    {
      // Client A: starts the task and is gone without waiting for it.
      const clientA = new TasksClient({ url: shim.url, taskStore: new FileTaskIdStore(path) });
      const started = await clientA.startTool('slow_compute', { seconds: 2, label: 'answer' });
      expect(started.kind).toBe('task');
    }
    const onDisk = JSON.parse(await readFile(path, 'utf8')) as { tasks: Array<{ tool: string }> };
    expect(onDisk.tasks.map((t) => t.tool)).toEqual(['slow_compute']);

    // Client B: a fresh process would build exactly this.
    const storeB = new FileTaskIdStore(path);
    const clientB = new TasksClient({ url: shim.url, taskStore: storeB });
    const outcomes = await clientB.resumeAll();

    expect(outcomes).toHaveLength(1);
    const [only] = outcomes;
    expect(only!.outcome.status).toBe('fulfilled');
    if (only!.outcome.status === 'fulfilled') {
      expect((only!.outcome.value.content[0] as { text: string }).text).toBe('Computed answer after 2s');
    }
    expect(await storeB.list()).toEqual([]);
    expect(await new FileTaskIdStore(path).list()).toEqual([]);
  });

  it('a stored id the server no longer knows is reported and dropped', async () => {
    const path = join(dir, 'stale.json');
    const store = new FileTaskIdStore(path);
    await store.save({ taskId: 'expired-long-ago', tool: 'slow_compute', createdAt: '2026-01-01T00:00:00.000Z' });
    const outcomes = await new TasksClient({ url: shim.url, taskStore: store }).resumeAll();

    expect(outcomes.map((o) => o.taskId)).toEqual(['expired-long-ago']);
    const outcome = outcomes[0]!.outcome;
    expect(outcome.status).toBe('rejected');
    if (outcome.status === 'rejected') {
      expect(outcome.reason).toBeInstanceOf(McpRequestError);
      expect((outcome.reason as McpRequestError).code).toBe(-32602);
    }
    expect(await store.list()).toEqual([]);
  });
});
