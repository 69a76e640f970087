import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { newTaskId } from '../../src/core/ids.js';
import { RedisSessionStore } from '../../src/session/redis-session-store.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { clusterKeys, keySlot } from '../support/cluster-keys.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { describeTaskStoreContract } from './contract.js';
import { newTask } from '../support/new-task.js';

let cluster: RedisCluster;
let prefixes = 0;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

// The same contract as on a single Redis; every replica is its own Cluster client.
describeTaskStoreContract('RedisTaskStore on a Redis Cluster', () => {
  const prefix = `mts-cluster-${++prefixes}`;
  return {
    open: () => new RedisTaskStore({ url: cluster.url, cluster: true, prefix }),
    residue: async () => (await clusterKeys(cluster, `${prefix}:*`)).length,
  };
});

describe('RedisTaskStore slots on a Redis Cluster', () => {
  const closing: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((each) => each.close()));
  });

  it("keeps a task's hash and its result-stream marks in the task's one slot", async () => {
    const tasks = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'slots' });
    const sessions = new RedisSessionStore({ url: cluster.url, cluster: true, prefix: 'slots' });
    closing.push(tasks, sessions);
    const taskId = newTaskId();
    await tasks.create(newTask({ taskId }));
    await sessions.holdResultStream(taskId, 'holder', 60_000);
    const keys = await clusterKeys(cluster, `slots:*{${taskId}}*`);
    expect(keys).toEqual([`slots:rs:{${taskId}}`, `slots:task:{${taskId}}`]);
    const slots = await Promise.all(keys.map((key) => keySlot(cluster, key)));
    expect(new Set(slots).size).toBe(1);
  });

  it('spreads different tasks over the masters', async () => {
    const tasks = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'spread' });
    closing.push(tasks);
    const ids = Array.from({ length: 12 }, () => newTaskId());
    for (const taskId of ids) {
      await tasks.create(newTask({ taskId }));
    }
    const slots = await Promise.all(ids.map((taskId) => keySlot(cluster, `spread:task:{${taskId}}`)));
    const masters = new Set(slots.map((slot) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2)));
    expect(masters.size).toBeGreaterThan(1);
    for (const taskId of ids) expect((await tasks.load(taskId))?.status).toBe('working');
  });

  it('serves concurrent operations on tasks in different slots, which ioredis pipelines per node', async () => {
    const tasks = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'concurrent' });
    closing.push(tasks);
    const ids = Array.from({ length: 30 }, () => newTaskId());
    await Promise.all(
      ids.map((taskId) =>
        tasks.create(newTask({ taskId })),
      ),
    );
    const finished = await Promise.all(ids.map((taskId) => tasks.finish(taskId, { status: 'completed', result: { content: [] } }, Date.now())));
    expect(finished.every(Boolean)).toBe(true);
    const loaded = await Promise.all(ids.map((taskId) => tasks.load(taskId)));
    expect(loaded.map((task) => task?.status)).toEqual(ids.map(() => 'completed'));
  });
});

// Last in the file: it takes the whole cluster down.
describe('RedisTaskStore when the whole Redis Cluster restarts', () => {
  it('fails fast while it is down, then serves and delivers changes again without a new store', async () => {
    const listener = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'outage' });
    const writer = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'outage' });
    try {
      const changes: string[] = [];
      listener.subscribe((change) => changes.push(change.taskId));
      await listener.subscriptionReady();
      await Promise.all(cluster.nodes.map((node) => node.halt()));
      const started = performance.now();
      await expect(writer.load(newTaskId())).rejects.toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(await writer.ping()).toBe(false);
      await Promise.all(cluster.nodes.map((node) => node.restart()));
      await vi.waitFor(async () => expect(await writer.ping()).toBe(true), { timeout: 20_000, interval: 200 });
      const taskId = newTaskId();
      await writer.create(newTask({ taskId }));
      // Until the subscriber has reconnected and resubscribed a change can be missed, so keep changing.
      await vi.waitFor(
        async () => {
          await writer.setStatusMessage(taskId, `tick ${Date.now()}`, Date.now());
          expect(changes).toContain(taskId);
        },
        { timeout: 20_000, interval: 200 },
      );
    } finally {
      await Promise.all([listener.close(), writer.close()]);
    }
  }, 60_000);
});
