import type { Cluster, Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTaskId } from '../../src/core/ids.js';
import { queueKeys, type QueueKeys } from '../../src/execution/queue-keys.js';
import { RedisWorkQueue } from '../../src/execution/redis-queue.js';
import type { Job } from '../../src/execution/work-queue.js';
import { pollUntil } from '../support/sep2663-client.js';

/** Where the contract's queues live: one Redis or a Redis Cluster. */
export interface QueueBackend {
  url: string;
  cluster: boolean;
  /** An admin client on the same Redis, for what an operator (or a dead worker) leaves behind. */
  admin(): Redis | Cluster;
}

/** Short leases, so that a lost job comes back within a second or two. */
const LOCK_MS = 600;
/** How long a lost job may take to come back: two leases, and a loaded two-core host's slack. */
const HANDOVER_BOUND_MS = 2 * LOCK_MS + 3_000;
const WAIT = { timeoutMs: 10_000, intervalMs: 20 };

/** A processor that records each job and holds it until the test lets it go. */
class Recorder {
  readonly jobs: Job[] = [];
  private readonly gates = new Map<string, () => void>();
  running = 0;
  maxRunning = 0;

  constructor(private readonly hold: boolean) {}

  readonly process = async (job: Job): Promise<void> => {
    this.jobs.push(job);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      if (this.hold) await new Promise<void>((resolve) => this.gates.set(job.taskId, resolve));
    } finally {
      this.running--;
    }
  };

  release(taskId?: string): void {
    for (const [id, open] of this.gates) {
      if (taskId === undefined || id === taskId) {
        this.gates.delete(id);
        open();
      }
    }
  }

  ran(taskId: string): Job[] {
    return this.jobs.filter((job) => job.taskId === taskId);
  }
}

export function describeWorkQueueContract(name: string, backendFor: () => QueueBackend): void {
  describe(`${name} (WorkQueue contract)`, () => {
    let backend: QueueBackend;
    let admin: Redis | Cluster;
    let prefix: string;
    let keys: QueueKeys;
    let prefixes = 0;
    const queues: RedisWorkQueue[] = [];
    const recorders: Recorder[] = [];

    /** A replica's queue on this test's prefix. */
    function replica(options: { concurrency?: number; lockMs?: number } = {}): RedisWorkQueue {
      const queue = new RedisWorkQueue({
        redisUrl: backend.url,
        redisCluster: backend.cluster,
        prefix,
        concurrency: options.concurrency ?? 4,
        lockDurationMs: options.lockMs ?? LOCK_MS,
      });
      queues.push(queue);
      return queue;
    }

    function worker(options: { concurrency?: number; hold?: boolean } = {}): { queue: RedisWorkQueue; recorder: Recorder } {
      const queue = replica(options);
      const recorder = new Recorder(options.hold ?? false);
      recorders.push(recorder);
      queue.start(recorder.process);
      return { queue, recorder };
    }

    beforeEach(() => {
      backend = backendFor();
      admin = backend.admin();
      prefix = `q-contract-${process.pid}-${++prefixes}-${Date.now()}`;
      keys = queueKeys(prefix);
    });

    afterEach(async () => {
      for (const recorder of recorders.splice(0)) recorder.release();
      await Promise.all(queues.splice(0).map((queue) => queue.close(1_000)));
      admin.disconnect();
    });

    it('resolves enqueue once the job is in Redis, where depth counts it before any worker runs', async () => {
      const queue = replica();
      const ids = [newTaskId(), newTaskId(), newTaskId()];
      for (const taskId of ids) await queue.enqueue(taskId);
      expect(await admin.lrange(keys.waiting, 0, -1)).toEqual([...ids].reverse());
      expect(await queue.depth()).toBe(3);
    });

    it('runs every job exactly once across several workers, oldest first, as a first delivery', async () => {
      const producer = replica();
      const workers = [worker(), worker(), worker()];
      const ids = Array.from({ length: 30 }, () => newTaskId());
      for (const taskId of ids) await producer.enqueue(taskId);
      await pollUntil(async () => workers.reduce((n, w) => n + w.recorder.jobs.length, 0), (n) => n >= ids.length, WAIT);
      const jobs = workers.flatMap((w) => w.recorder.jobs);
      expect(jobs.map((job) => job.taskId).sort()).toEqual([...ids].sort());
      expect(jobs.every((job) => job.lostRuns === 0)).toBe(true);
      expect(await pollUntil(() => producer.depth(), (depth) => depth === 0, WAIT)).toBe(0);
    });

    it('runs at most `concurrency` jobs at once on a worker and takes the rest as its slots free', async () => {
      const { queue, recorder } = worker({ concurrency: 2, hold: true });
      const ids = Array.from({ length: 5 }, () => newTaskId());
      for (const taskId of ids) await queue.enqueue(taskId);
      await pollUntil(async () => recorder.running, (n) => n === 2, WAIT);
      // Two running under leases, three waiting.
      expect(await queue.depth()).toBe(5);
      expect(await admin.zcard(keys.leases)).toBe(2);
      for (let done = 0; recorder.jobs.length < ids.length || recorder.running > 0; done++) {
        recorder.release();
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (done > 500) throw new Error('the worker did not take the remaining jobs');
      }
      expect(recorder.maxRunning).toBe(2);
      expect(recorder.jobs.map((job) => job.taskId)).toEqual(ids);
      expect(await pollUntil(() => queue.depth(), (depth) => depth === 0, WAIT)).toBe(0);
    });

    it('wakes a waiting worker for a job queued later', async () => {
      const { recorder } = worker();
      const producer = replica();
      // The worker is blocked in its wait by now; the job must reach it without a poll interval.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const taskId = newTaskId();
      const queuedAt = Date.now();
      await producer.enqueue(taskId);
      await pollUntil(async () => recorder.ran(taskId).length, (n) => n === 1, WAIT);
      expect(Date.now() - queuedAt).toBeLessThan(2_000);
    });

    it('hands the job of a worker that stopped renewing to another worker, with one lost run, within about two leases', async () => {
      const first = worker({ hold: true });
      const taskId = newTaskId();
      await first.queue.enqueue(taskId);
      await pollUntil(async () => first.recorder.ran(taskId).length, (n) => n === 1, WAIT);
      // The grace ends with the job still running: its lease is no longer renewed (a dead worker's fate).
      await first.queue.drain(100);
      const stoppedAt = Date.now();
      const second = worker({ hold: true });
      await pollUntil(async () => second.recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      expect(Date.now() - stoppedAt).toBeLessThanOrEqual(HANDOVER_BOUND_MS);
      expect(second.recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 1 }]);
      expect(first.recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 0 }]);
    });

    it('counts every lost run: a job lost twice comes back with lostRuns 2', async () => {
      const taskId = newTaskId();
      const first = worker({ hold: true });
      await first.queue.enqueue(taskId);
      await pollUntil(async () => first.recorder.ran(taskId).length, (n) => n === 1, WAIT);
      await first.queue.drain(0);
      const second = worker({ hold: true });
      await pollUntil(async () => second.recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      await second.queue.drain(0);
      const third = worker({ hold: true });
      await pollUntil(async () => third.recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      expect(third.recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 2 }]);
    });

    it('does not take back a lease it lost: it stops renewing it, and its end leaves the new holder running', async () => {
      // One slot each, so that the stalled worker cannot take its own lost job back.
      const stalled = worker({ concurrency: 1, hold: true });
      const taskId = newTaskId();
      await stalled.queue.enqueue(taskId);
      await pollUntil(async () => stalled.recorder.ran(taskId).length, (n) => n === 1, WAIT);
      const stalledOwner = await admin.hget(keys.owners, taskId);
      // As if the worker had not renewed in time: its lease lapsed.
      await admin.zadd(keys.leases, 0, taskId);
      const taker = worker({ concurrency: 1, hold: true });
      await pollUntil(async () => taker.recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      expect(taker.recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 1 }]);
      const owner = await admin.hget(keys.owners, taskId);
      expect(owner).not.toBe(stalledOwner);
      // Several renewal intervals later only the taker holds the job, and it renews the lease.
      await new Promise((resolve) => setTimeout(resolve, LOCK_MS * 2));
      expect(await admin.hget(keys.owners, taskId)).toBe(owner);
      expect(Number(await admin.zscore(keys.leases, taskId))).toBeGreaterThan(Date.now());
      stalled.recorder.release(taskId);
      await new Promise((resolve) => setTimeout(resolve, LOCK_MS));
      expect(await admin.hget(keys.owners, taskId)).toBe(owner);
      expect(await taker.queue.depth()).toBe(1);
      taker.recorder.release(taskId);
      expect(await pollUntil(() => taker.queue.depth(), (depth) => depth === 0, WAIT)).toBe(0);
    });

    it('never runs a job queued twice on two workers at once: the copy is dropped while the job runs', async () => {
      const first = worker({ hold: true });
      const taskId = newTaskId();
      await first.queue.enqueue(taskId);
      await pollUntil(async () => first.recorder.ran(taskId).length, (n) => n === 1, WAIT);
      await first.queue.enqueue(taskId);
      const second = worker({ hold: true });
      await pollUntil(() => admin.llen(keys.waiting), (n) => n === 0, WAIT);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(second.recorder.jobs).toEqual([]);
      expect(first.recorder.ran(taskId)).toHaveLength(1);
      expect(await first.queue.depth()).toBe(1);
    });

    it('hands back a job a dead worker had taken into its claimed list but never leased, as a first delivery', async () => {
      const taskId = newTaskId();
      // A worker that died right after its blocking wait moved a job: its heartbeat has lapsed.
      await admin.lpush(`${keys.claimed}deadworker`, taskId);
      await admin.zadd(keys.workers, 0, 'deadworker');
      const { recorder } = worker();
      await pollUntil(async () => recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      expect(recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 0 }]);
      expect(await admin.exists(`${keys.claimed}deadworker`)).toBe(0);
    });

    it('drain stops taking jobs, waits for the running ones within the grace, and queueing still works', async () => {
      const leaving = worker({ hold: true });
      const running = newTaskId();
      await leaving.queue.enqueue(running);
      await pollUntil(async () => leaving.recorder.ran(running).length, (n) => n === 1, WAIT);
      let drained = false;
      const draining = leaving.queue.drain(10_000).then(() => (drained = true));
      const queued = newTaskId();
      await leaving.queue.enqueue(queued);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(leaving.recorder.ran(queued)).toEqual([]);
      expect(drained).toBe(false);
      leaving.recorder.release(running);
      await draining;
      // Finished within the grace: its job ended, nothing of it is left to hand on.
      expect(await admin.zcard(keys.leases)).toBe(0);
      const staying = worker();
      await pollUntil(async () => staying.recorder.ran(queued).length, (n) => n === 1, WAIT);
      expect(staying.recorder.ran(queued)).toEqual([{ taskId: queued, lostRuns: 0 }]);
      expect(staying.recorder.ran(running)).toEqual([]);
    });

    it('tells a job still running when the grace ends to let go, and does not end it: it comes back to another worker as lost', async () => {
      const leaving = replica();
      const taskId = newTaskId();
      const released: boolean[] = [];
      // Like a TaskRunner: returns as soon as it is released.
      leaving.start(
        (_job, signal) =>
          new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => {
              released.push(signal.aborted);
              resolve();
            }),
          ),
      );
      await leaving.enqueue(taskId);
      await pollUntil(async () => admin.hget(keys.owners, taskId), (owner) => owner !== null, WAIT);
      await leaving.drain(100);
      expect(released).toEqual([true]);
      // The processor returned, yet the job was not ended: its lease waits to lapse.
      expect(await admin.zscore(keys.leases, taskId)).not.toBeNull();
      const staying = worker({ hold: true });
      await pollUntil(async () => staying.recorder.ran(taskId).length, (n) => n === 1, { ...WAIT, timeoutMs: HANDOVER_BOUND_MS });
      expect(staying.recorder.ran(taskId)).toEqual([{ taskId, lostRuns: 1 }]);
    });

    it('drains a worker that waits for jobs at once, and one that never started', async () => {
      const idle = worker();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      await idle.queue.drain(10_000);
      await replica().drain(10_000);
      expect(Date.now() - started).toBeLessThan(2_500);
    });

    it('refuses to queue once closed', async () => {
      const queue = replica();
      await queue.close(0);
      await expect(queue.enqueue(newTaskId())).rejects.toThrow(/closed/);
    });
  });
}
