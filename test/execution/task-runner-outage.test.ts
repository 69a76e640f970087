import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolInvoker } from '../../src/core/ports.js';
import { newTaskId } from '../../src/core/ids.js';
import { TaskRunner } from '../../src/execution/task-runner.js';
import { UpstreamRpc } from '../../src/upstream/client/rpc-client.js';
import { SessionPool } from '../../src/upstream/client/session-pool.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil } from '../support/sep2663-client.js';

let redis: RedisServer;
let upstream: DemoUpstreamProcess;
let pool: SessionPool;
let store: RedisTaskStore;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedis({ appendonly: true, appendfsync: 'always' }), spawnDemoUpstream(['--port', '0'])]);
  pool = new SessionPool(new UpstreamRpc({ url: upstream.url }), { clientInfo: { name: 'runner-test', version: '1.0.0' } });
  store = new RedisTaskStore({ url: redis.url, prefix: 'runner' });
  await store.subscriptionReady();
}, 30_000);

afterAll(async () => {
  await store?.close();
  await pool?.close();
  upstream?.killGroup();
  await upstream?.exited;
  await redis?.stop();
});

describe('TaskRunner while Redis is unreachable', () => {
  it('keeps the outcome of a call that ended during the outage, and writes it once Redis is back', { timeout: 60_000 }, async () => {
    // The real pool and store, observed: when the upstream call returned, and when a finish failed.
    let callEnded!: () => void;
    const ended = new Promise<void>((resolve) => (callEnded = resolve));
    const invoker: ToolInvoker = {
      callTool: async (...args) => {
        const result = await pool.callTool(...args);
        callEnded();
        return result;
      },
    };
    let failedFinishes = 0;
    const observedStore = Object.create(store) as RedisTaskStore;
    observedStore.finish = (...args) =>
      store.finish(...args).catch((err: unknown) => {
        failedFinishes++;
        throw err;
      });
    const runner = new TaskRunner({ store: observedStore, invoker, isIdempotent: () => false, retryBaseMs: 50 });

    const taskId = newTaskId();
    await store.create({
      taskId,
      principal: 'p',
      origin: 'sep2663',
      tool: 'slow_compute',
      arguments: { seconds: 1, label: 'outage' },
      createdAt: Date.now(),
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
      clientCapabilities: {},
    });
    const running = runner.process({ taskId, lostRuns: 0 });
    await pollUntil(() => store.load(taskId), (task) => task?.startedAt !== undefined);

    await redis.halt();
    await ended;
    await pollUntil(async () => failedFinishes, (n) => n > 0, { timeoutMs: 10_000 });
    await redis.restart();
    await running;

    const task = await store.load(taskId);
    expect(task?.status).toBe('completed');
    expect(task?.result).toMatchObject({ content: [{ type: 'text', text: 'Computed outage after 1s' }] });
  });
});
