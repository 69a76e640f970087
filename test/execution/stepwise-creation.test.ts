import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalError, LimitExceededError } from '../../src/core/errors.js';
import { PrincipalLimits } from '../../src/core/limits.js';
import { systemClock } from '../../src/core/ports.js';
import { StepwiseCreation } from '../../src/execution/stepwise-creation.js';
import { RedisWorkQueue } from '../../src/execution/redis-queue.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { newTask } from '../support/new-task.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

let redis: RedisServer;
/** The queue's own Redis, stopped when a test needs queueing to fail. */
let queueRedis: RedisServer;
let store: RedisTaskStore;
let queue: RedisWorkQueue;

beforeAll(async () => {
  [redis, queueRedis] = await Promise.all([startRedis(), startRedis()]);
  store = new RedisTaskStore({ url: redis.url, prefix: 'stepwise' });
  queue = new RedisWorkQueue({ redisUrl: queueRedis.url, prefix: 'stepwise', concurrency: 1 });
});

afterAll(async () => {
  await queue?.close(0);
  await store?.close();
  await Promise.all([redis?.stop(), queueRedis?.stop()]);
});

function stepwise(maxOpenTasks: number): { intake: StepwiseCreation; limits: PrincipalLimits } {
  const limits = new PrincipalLimits(store, { maxOpenTasks, maxOpenStreams: 0, streamLeaseMs: 0 }, systemClock);
  return { intake: new StepwiseCreation(store, queue, limits, systemClock), limits };
}

describe('StepwiseCreation: count, write, queue, one call each', () => {
  it('writes the task and queues its job', async () => {
    const task = newTask({ principal: 'dora' });
    const created = await stepwise(5).intake.queued(task);
    expect(await store.load(task.taskId)).toEqual(created);
    expect(await queue.depth()).toBeGreaterThanOrEqual(1);
  });

  it('refuses a task over the limit and writes nothing', async () => {
    const { intake } = stepwise(1);
    await intake.queued(newTask({ principal: 'erin' }));
    const refused = newTask({ principal: 'erin' });
    await expect(intake.queued(refused)).rejects.toBeInstanceOf(LimitExceededError);
    expect(await store.load(refused.taskId)).toBeUndefined();
  });

  it('fails the task at once when queueing fails, and gives its open-task slot back', async () => {
    const { intake } = stepwise(1);
    const task = newTask({ principal: 'frank' });
    await queueRedis.halt();
    try {
      const error = await intake.queued(task).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(InternalError);
      expect((error as Error).message).toMatch(/^Could not queue the task: /);
      const failed = await store.load(task.taskId);
      expect(failed?.status).toBe('failed');
      expect(failed?.error).toEqual({ code: -32603, message: (error as Error).message });
      // The failed task no longer counts: the principal's one slot takes the next task.
      const next = newTask({ principal: 'frank' });
      await expect(stepwise(1).limits.admitTask('frank', next.taskId, next.createdAt + next.ttlMs)).resolves.toBeUndefined();
    } finally {
      await queueRedis.restart();
    }
  });
});
