import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { newTaskId } from '../../src/core/ids.js';
import { queueKeys } from '../../src/execution/queue-keys.js';
import { RedisWorkQueue } from '../../src/execution/redis-queue.js';
import type { Job } from '../../src/execution/work-queue.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { clusterKeys, keySlot } from '../support/cluster-keys.js';
import { newTask } from '../support/new-task.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { pollUntil } from '../support/sep2663-client.js';
import { describeWorkQueueContract } from './queue-contract.js';

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

const admin = (): Cluster => new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));

// The same contract as on one Redis; every replica is its own Cluster client.
describeWorkQueueContract('RedisWorkQueue on a Redis Cluster', () => ({ url: cluster.url, cluster: true, admin }));

describe('RedisWorkQueue slots on a Redis Cluster', () => {
  it('keeps every queue key, a claimed list included, in one slot on one master', async () => {
    const queue = new RedisWorkQueue({ redisUrl: cluster.url, redisCluster: true, prefix: 'slots', concurrency: 1, lockDurationMs: 60_000 });
    let release!: () => void;
    const ran: Job[] = [];
    try {
      queue.start(async (job) => {
        ran.push(job);
        await new Promise<void>((resolve) => (release = resolve));
      });
      await queue.enqueue(newTaskId());
      await queue.enqueue(newTaskId());
      await pollUntil(async () => ran.length, (n) => n === 1);
      const keys = await clusterKeys(cluster, '{slots:q}:*');
      const { waiting, leases, owners, workers, claimed } = queueKeys('slots');
      expect(keys).toEqual([leases, owners, waiting, workers].sort());
      const slots = await Promise.all([...keys, `${claimed}anyworker`].map((key) => keySlot(cluster, key)));
      expect(new Set(slots).size).toBe(1);
      const perNode = await Promise.all(cluster.nodes.map((node) => clusterKeys({ ...cluster, nodes: [node] }, '{slots:q}:*')));
      expect(perNode.filter((each) => each.length > 0)).toHaveLength(1);
    } finally {
      release?.();
      await queue.close(1_000);
    }
  });
});

describe('task creation on a Redis Cluster', () => {
  it('refuses the one-script creation, whose keys lie in three slots', async () => {
    const store = new RedisTaskStore({ url: cluster.url, cluster: true, prefix: 'one-script' });
    try {
      await expect(store.createQueued(newTask(), queueKeys('one-script').waiting, 0)).rejects.toThrow(/not on a Redis Cluster/);
    } finally {
      await store.close();
    }
  });
});

// Last in the file: it takes the whole cluster down.
describe('RedisWorkQueue when the whole Redis Cluster restarts', () => {
  it('fails enqueue fast while it is down, then queues and runs jobs again without a new queue', async () => {
    const queue = new RedisWorkQueue({ redisUrl: cluster.url, redisCluster: true, prefix: 'outage', concurrency: 2, lockDurationMs: 5_000 });
    const ran: Job[] = [];
    try {
      queue.start(async (job) => void ran.push(job));
      await queue.enqueue(newTaskId());
      await pollUntil(async () => ran.length, (n) => n === 1, { timeoutMs: 10_000 });
      await Promise.all(cluster.nodes.map((node) => node.halt()));
      const started = performance.now();
      await expect(queue.enqueue(newTaskId())).rejects.toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(3_000);
      await Promise.all(cluster.nodes.map((node) => node.restart()));
      const after = newTaskId();
      await pollUntil(
        () => queue.enqueue(after).then(() => true, () => false),
        (queued) => queued,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await pollUntil(async () => ran.some((job) => job.taskId === after), (done) => done, { timeoutMs: 20_000 });
    } finally {
      await queue.close(0);
    }
  }, 60_000);
});
