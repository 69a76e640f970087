import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { newTaskId } from '../../src/core/ids.js';
import { queueKeys } from '../../src/execution/queue-keys.js';
import { RedisWorkQueue } from '../../src/execution/redis-queue.js';
import type { Job } from '../../src/execution/work-queue.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil } from '../support/sep2663-client.js';
import { describeWorkQueueContract } from './queue-contract.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server?.stop();
});

describeWorkQueueContract('RedisWorkQueue', () => ({ url: server.url, cluster: false, admin: () => new Redis(server.url) }));

/** Calls Redis counted for the queue's own commands (INFO commandstats), over every command kind. */
async function queueCalls(admin: Redis): Promise<number> {
  const info = (await admin.info('commandstats')).split('\n');
  let calls = 0;
  for (const line of info) {
    const match = /^cmdstat_(evalsha|eval|blmove|lpush|rpop|zadd):calls=(\d+)/.exec(line);
    if (match) calls += Number(match[2]);
  }
  return calls;
}

describe('RedisWorkQueue on one Redis', () => {
  const queues: RedisWorkQueue[] = [];
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.close(0)));
  });

  it('keeps every key under the hash tag {<prefix>:q}', async () => {
    const queue = new RedisWorkQueue({ redisUrl: server.url, prefix: 'layout', concurrency: 1, lockDurationMs: 60_000 });
    queues.push(queue);
    const ran: Job[] = [];
    let release!: () => void;
    queue.start(async (job) => {
      ran.push(job);
      await new Promise<void>((resolve) => (release = resolve));
    });
    await queue.enqueue(newTaskId());
    await queue.enqueue(newTaskId());
    await pollUntil(async () => ran.length, (n) => n === 1);
    const admin = new Redis(server.url);
    try {
      const keys = await admin.keys('*layout*');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((key) => key.startsWith('{layout:q}:'))).toBe(true);
      const layout = queueKeys('layout');
      expect(keys.sort()).toEqual([layout.leases, layout.owners, layout.waiting, layout.workers].sort());
    } finally {
      release();
      admin.disconnect();
    }
  });

  it('waits for jobs without polling: an idle worker sends next to no commands', async () => {
    const admin = new Redis(server.url);
    try {
      const queue = new RedisWorkQueue({ redisUrl: server.url, prefix: 'idle', concurrency: 4, lockDurationMs: 30_000 });
      queues.push(queue);
      queue.start(async () => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = await queueCalls(admin);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // One blocking wait lasts 5 s, a renewal comes every 10 s: at most one of each in 2 s.
      expect((await queueCalls(admin)) - before).toBeLessThanOrEqual(2);
    } finally {
      admin.disconnect();
    }
  });

  it('refuses an invalid prefix before connecting', () => {
    expect(() => new RedisWorkQueue({ redisUrl: server.url, prefix: 'a{b}', concurrency: 1 })).toThrow(/prefix/);
  });
});

describe('RedisWorkQueue when Redis goes away', () => {
  let own: RedisServer;
  const queues: RedisWorkQueue[] = [];

  beforeAll(async () => {
    own = await startRedis({ appendonly: true, appendfsync: 'always' });
  });
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.close(0)));
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('fails enqueue fast with a retryable UnavailableError while Redis is down', async () => {
    const queue = new RedisWorkQueue({ redisUrl: own.url, prefix: 'down', concurrency: 1 });
    queues.push(queue);
    await queue.enqueue(newTaskId());
    await own.halt();
    try {
      const started = performance.now();
      await expect(queue.enqueue(newTaskId())).rejects.toBeInstanceOf(UnavailableError);
      await expect(queue.depth()).rejects.toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(4_000);
    } finally {
      await own.restart();
    }
  });

  it('keeps working across a Redis restart: a running job keeps its lease, new jobs are taken', { timeout: 30_000 }, async () => {
    const queue = new RedisWorkQueue({ redisUrl: own.url, prefix: 'restart', concurrency: 2, lockDurationMs: 5_000 });
    queues.push(queue);
    const ran: Job[] = [];
    const gates = new Map<string, () => void>();
    queue.start(async (job) => {
      ran.push(job);
      await new Promise<void>((resolve) => gates.set(job.taskId, resolve));
    });
    const before = newTaskId();
    await queue.enqueue(before);
    await pollUntil(async () => ran.length, (n) => n === 1);
    await own.restart();
    const after = newTaskId();
    await pollUntil(
      () => queue.enqueue(after).then(() => true, () => false),
      (queued) => queued,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await pollUntil(async () => ran.length, (n) => n === 2, { timeoutMs: 15_000 });
    expect(ran).toEqual([
      { taskId: before, lostRuns: 0 },
      { taskId: after, lostRuns: 0 },
    ]);
    for (const open of gates.values()) open();
    expect(await pollUntil(() => queue.depth().catch(() => -1), (depth) => depth === 0, { timeoutMs: 10_000 })).toBe(0);
  });
});
