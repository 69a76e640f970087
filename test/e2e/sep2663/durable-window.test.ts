import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../../src/execution/queue-keys.js';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

/**
 * An `auto` call becomes a durable task only when it outlasts its window
 * (docs/decisions/0032-durable-when-it-must-be.md). No default shim: each test starts the replicas
 * it needs on the stack's Redis, with a window of WINDOW_MS and a short job lock.
 */
const stack = useStack({ stores: [], record: true });
const WINDOW_MS = 1_500;
const JOB_LOCK_MS = 3_000;
/** A dead replica's lease lapses within a lock, a reclaim hands its job on within half a lock more; the rest is a loaded host. */
const LOSS_BOUND_MS = 2 * JOB_LOCK_MS + 8_000;
const TERMINAL = ['completed', 'failed', 'cancelled'];
const keys = queueKeys('mts');

let redis: Redis;
beforeAll(() => {
  redis = new Redis(stack.redis.url);
});
afterAll(() => {
  redis?.disconnect();
});

function replica(args: string[] = []): Promise<ShimProcess> {
  return stack.startShim({ env: { SHIM_AUTO_WINDOW_MS: String(WINDOW_MS) }, args: ['--job-lock-ms', String(JOB_LOCK_MS), ...args] });
}

/** Every key that would hold a task or its job: task hashes, open-task counts, queued and held jobs. */
async function taskKeys(): Promise<{ tasks: string[]; open: string[]; waiting: number; leases: number; owners: number }> {
  const [tasks, open, waiting, leases, owners] = await Promise.all([
    redis.keys('mts:task:*'),
    redis.keys('mts:open:*'),
    redis.llen(keys.waiting),
    redis.zcard(keys.leases),
    redis.hlen(keys.owners),
  ]);
  return { tasks, open, waiting, leases, owners };
}

const NOTHING = { tasks: [], open: [], waiting: 0, leases: 0, owners: 0 };

describe('an auto call on the 2026-07-28 wire, durable only when it must be', () => {
  it('answers a call that ends inside its window plainly and leaves no task and no task key behind', async () => {
    const shim = await replica();
    try {
      await redis.flushall();
      const client = new Sep2663Client(shim.url);
      for (const seconds of [0, 0.2]) {
        const result = await client.result('tools/call', { name: 'slow_compute', arguments: { seconds } });
        expect(result.resultType).toBe('complete');
        expect(textOf(result)).toBe(`Computed result after ${seconds}s`);
      }
      expect(textOf(await client.result('tools/call', { name: 'greet', arguments: { name: 'quick' } }))).toMatch(/quick/);
      expect(await taskKeys()).toEqual(NOTHING);
    } finally {
      await shim.stop();
    }
  });

  it('makes a call that outlasts its window a task that every wire and every replica reads, to its result', async () => {
    const [first, second] = await Promise.all([replica(), replica()]);
    try {
      const answer = await new Sep2663Client(first.url).result('tools/call', { name: 'slow_compute', arguments: { seconds: 4, label: 'outlasting' } });
      expect(answer.resultType).toBe('task');
      expect(answer.status).toBe('working');
      const taskId = answer.taskId as string;

      const onSecond = new Sep2663Client(second.url);
      const read = await onSecond.result('tasks/get', { taskId });
      expect(read).toMatchObject({ taskId, status: 'working' });
      const legacy = await LegacySession.open(second.url);
      expect(await legacy.result('tasks/get', { taskId })).toMatchObject({ taskId, status: 'working' });
      const dialect = await LegacySession.open(second.url);
      expect((await dialect.result('tasks/status', { taskId })).status).toBe('running');

      const done = await onSecond.waitForStatus(taskId, TERMINAL, { timeoutMs: 20_000 });
      expect(done.status).toBe('completed');
      expect(textOf(done.result)).toBe('Computed outlasting after 4s');
      expect(textOf((await legacy.result('tasks/result', { taskId })) as Json)).toBe('Computed outlasting after 4s');
      // Ended: its open-task count and its job are gone; only the record stays, until its TTL.
      await onSecond.waitForTask(taskId, () => true);
      const left = await taskKeys();
      expect(left).toMatchObject({ open: [], waiting: 0, leases: 0, owners: 0 });
      expect(left.tasks).toHaveLength(1);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('fails the request of a replica killed inside the window, and leaves nothing behind that could stay working', { timeout: 60_000 }, async () => {
    await redis.flushall();
    const victim = await replica();
    const survivor = await replica();
    try {
      const call = new Sep2663Client(victim.url).request('tools/call', { name: 'slow_compute', arguments: { seconds: 30, label: 'cut' } });
      // The call runs (the upstream reports its progress) but is not a task yet.
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS / 3));
      victim.kill();
      await expect(call).rejects.toThrow();
      await victim.exited;
      expect(await taskKeys()).toEqual(NOTHING);
      // The survivor, whose reclaims run all along, has nothing to hand on and serves the retry.
      await new Promise((resolve) => setTimeout(resolve, JOB_LOCK_MS));
      expect(await taskKeys()).toEqual(NOTHING);
      const retried = await new Sep2663Client(survivor.url).result('tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'retry' } });
      expect(textOf(retried)).toBe('Computed retry after 0s');
    } finally {
      await survivor.stop();
    }
  });

  it('after the window a killed replica\'s task is handed on and ends failed as lost, like any task', { timeout: 60_000 }, async () => {
    const victim = await replica();
    const survivor = await replica();
    try {
      const answer = await new Sep2663Client(victim.url).result('tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'held' } });
      expect(answer.resultType).toBe('task');
      // The job is leased to the replica that received the call: it was never queued.
      expect(await redis.hget(keys.owners, answer.taskId)).toBeTruthy();
      expect(await redis.llen(keys.waiting)).toBe(0);
      victim.kill();
      await victim.exited;
      const killedAt = Date.now();
      const ended = await new Sep2663Client(survivor.url).waitForStatus(answer.taskId, TERMINAL, { timeoutMs: LOSS_BOUND_MS, intervalMs: 100 });
      expect(ended.status).toBe('failed');
      expect(ended.error.message).toMatch(/execution was lost/i);
      expect(Date.now() - killedAt).toBeLessThanOrEqual(LOSS_BOUND_MS);
    } finally {
      await survivor.stop();
    }
  });

  it('after the window a cancel from another replica stops the call that runs on the first one', { timeout: 60_000 }, async () => {
    const [first, second] = await Promise.all([replica(), replica()]);
    try {
      const answer = await new Sep2663Client(first.url).result('tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'stop' } });
      expect(answer.resultType).toBe('task');
      const [call] = stack.recorder.toolCalls('slow_compute').filter((m) => (m.params?.arguments as Json)?.label === 'stop');
      expect(call).toBeDefined();
      const cancelled = (): boolean => stack.recorder.messages.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call!.id);
      expect(cancelled()).toBe(false);
      expect((await new Sep2663Client(second.url).cancelTask(answer.taskId)).status).toBe(200);
      expect((await new Sep2663Client(second.url).waitForStatus(answer.taskId, TERMINAL)).status).toBe('cancelled');
      await expect.poll(cancelled, { timeout: 10_000 }).toBe(true);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('on an api replica, a call that outlasts its window goes on there as a task, without any worker', { timeout: 60_000 }, async () => {
    const api = await replica(['--role', 'api']);
    try {
      const client = new Sep2663Client(api.url);
      const answer = await client.result('tools/call', { name: 'slow_compute', arguments: { seconds: 3, label: 'on-api' } });
      expect(answer.resultType).toBe('task');
      const done = await client.waitForStatus(answer.taskId, TERMINAL, { timeoutMs: 20_000 });
      expect(textOf(done.result)).toBe('Computed on-api after 3s');
    } finally {
      await api.stop();
    }
  });
});
