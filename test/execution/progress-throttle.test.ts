import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '../../src/core/ids.js';
import { TaskRunner } from '../../src/execution/task-runner.js';
import { UpstreamRpc } from '../../src/upstream/client/rpc-client.js';
import { SessionPool } from '../../src/upstream/client/session-pool.js';
import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';

let upstream: DemoUpstreamProcess;
let pool: SessionPool;

beforeAll(async () => {
  upstream = await spawnDemoUpstream(['--port', '0']);
  pool = new SessionPool(new UpstreamRpc({ url: upstream.url }), { clientInfo: { name: 'progress-test', version: '1.0.0' } });
}, 30_000);

afterAll(async () => {
  await pool?.close();
  upstream?.killGroup();
  await upstream?.exited;
});

describe('TaskRunner progress', () => {
  it('writes statusMessage at most about once a second however often the upstream reports, and keeps the newest', { timeout: 30_000 }, async () => {
    const store = new EmbeddedTaskStore();
    const runner = new TaskRunner({ store, invoker: pool, isIdempotent: () => false });
    const taskId = newTaskId();
    await store.create({
      taskId,
      principal: 'p',
      origin: 'sep2663',
      tool: 'slow_compute',
      // The demo reports progress every 250 ms: about 12 reports in 3 s.
      arguments: { seconds: 3, label: 'throttled' },
      createdAt: Date.now(),
      ttlMs: 60_000,
      pollIntervalMs: 2_000,
      clientCapabilities: {},
    });
    const messages: string[] = [];
    const unsubscribe = store.subscribe((change) => {
      if (change.taskId !== taskId) return;
      void store.load(taskId).then((task) => {
        if (task?.status === 'working' && task.statusMessage && messages.at(-1) !== task.statusMessage) messages.push(task.statusMessage);
      });
    });
    const started = Date.now();
    await runner.process({ taskId, lostRuns: 0 });
    const elapsedS = (Date.now() - started) / 1000;
    unsubscribe();
    const task = await store.load(taskId);
    expect(task?.status).toBe('completed');
    expect(messages.length).toBeGreaterThanOrEqual(2);
    // One write at the start, then one per second at most (plus the flush at the end).
    expect(messages.length).toBeLessThanOrEqual(Math.ceil(elapsedS) + 2);
    expect(messages.every((m) => m.startsWith('Computing throttled'))).toBe(true);
  });
});
