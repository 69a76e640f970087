import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';
import { writeFleetPolicy } from './fleet-policy.js';

/**
 * `appendfsync always` makes Redis fsync every write before it answers, so a write the shim
 * acknowledged to a client is on disk even when the server is SIGKILLed right after (the
 * default `everysec` may lose up to a second of writes; a graceful stop flushes either way,
 * which is why this test crashes the server instead of stopping it).
 * The job lock keeps its default (30 s), well above the outage: a lock shorter than an outage
 * would have the queue take the running tasks for lost.
 */
let redis: RedisServer;
let upstream: DemoUpstreamProcess;
const shims: ShimProcess[] = [];

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedis({ appendonly: true, appendfsync: 'always' }), spawnDemoUpstream(['--port', '0'])]);
  const policy = writeFleetPolicy();
  shims.push(
    ...(await Promise.all(
      [0, 1].map(() => startShimProcess({ upstreamUrl: upstream.url, redisUrl: redis.url, args: ['--policy', policy] })),
    )),
  );
});

afterAll(async () => {
  await Promise.all(shims.map((shim) => shim.stop()));
  upstream?.killGroup();
  await upstream?.exited;
  await redis?.stop();
});

const TERMINAL = ['completed', 'failed', 'cancelled'];

describe('redis-server restarted (crash, AOF with appendfsync always)', () => {
  it('keeps every acknowledged task readable, and each completes afterwards', { timeout: 90_000 }, async () => {
    const [one, two] = shims.map((shim) => new Sep2663Client(shim.url)) as [Sep2663Client, Sep2663Client];
    const working = await Promise.all([1, 2, 3].map((n) => one.createTask('slow_compute', { seconds: 6, label: `w${n}` })));
    const asking = await Promise.all(['a.txt', 'b.txt'].map((filename) => two.createTask('confirm_delete', { filename })));
    const session = await LegacySession.open(shims[0]!.url);
    const legacyTask = (await session.result('tools/call', { name: 'slow_compute', arguments: { seconds: 6, label: 'legacy' }, task: { ttl: 120_000 } })).task;
    const finished = await one.createTask('slow_compute', { seconds: 0, label: 'done' });

    for (const t of [...working, legacyTask]) await one.waitForTask(t.taskId, (task) => /^Computing /.test(task.statusMessage ?? ''));
    for (const t of asking) await two.waitForStatus(t.taskId, 'input_required');
    const completedBefore = await one.waitForStatus(finished.taskId, 'completed');

    await redis.crash();
    await redis.restart();

    // Readable on both replicas once they have reconnected; a read during the reconnect may fail.
    const readable = (client: Sep2663Client, taskId: string): Promise<Json> =>
      pollUntil(
        () => client.request('tasks/get', { taskId }),
        (reply) => reply.status === 200 && reply.body?.result?.taskId === taskId,
        { timeoutMs: 20_000, intervalMs: 200 },
      ).then((reply) => reply.body.result);
    for (const client of [one, two]) {
      for (const t of [...working, ...asking, legacyTask, finished]) expect((await readable(client, t.taskId)).taskId).toBe(t.taskId);
    }
    expect(await one.result('tasks/get', { taskId: finished.taskId })).toEqual({ ...completedBefore, _meta: expect.anything() });

    for (const t of asking) {
      const task = await two.waitForStatus(t.taskId, 'input_required');
      const key = Object.keys(task.inputRequests)[0] as string;
      expect((await one.updateTask(t.taskId, { [key]: { action: 'accept', content: { confirm: true } } })).status).toBe(200);
    }
    const done = await Promise.all(
      [...working, ...asking, legacyTask].map((t) => two.waitForStatus(t.taskId, TERMINAL, { timeoutMs: 40_000, intervalMs: 200 })),
    );
    expect(done.map((task) => [task.status, textOf(task.result)])).toEqual([
      ['completed', 'Computed w1 after 6s'],
      ['completed', 'Computed w2 after 6s'],
      ['completed', 'Computed w3 after 6s'],
      ['completed', 'Deleted a.txt'],
      ['completed', 'Deleted b.txt'],
      ['completed', 'Computed legacy after 6s'],
    ]);
    // The legacy session lives in Redis too: it still reads its task in its own vocabulary.
    expect((await session.result('tasks/get', { taskId: legacyTask.taskId })).status).toBe('completed');

    // And the fleet takes new work.
    const after = await two.createTask('slow_compute', { seconds: 0.2, label: 'after' });
    expect(textOf((await one.waitForStatus(after.taskId, 'completed')).result)).toBe('Computed after after 0.2s');
  });
});
