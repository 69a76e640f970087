import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LimitExceededError, UnavailableError } from '../../src/core/errors.js';
import { PrincipalLimits } from '../../src/core/limits.js';
import { systemClock } from '../../src/core/ports.js';
import { OneScriptCreation } from '../../src/execution/one-script-creation.js';
import { queueKeys } from '../../src/execution/queue-keys.js';
import type { JobPlace } from '../../src/execution/work-queue.js';
import { openKey, taskKey } from '../../src/store/redis/keys.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { newTask } from '../support/new-task.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let admin: Redis;
let prefixes = 0;
const stores: RedisTaskStore[] = [];

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

function intake(maxOpenTasks: number, url = server.url): { intake: OneScriptCreation; store: RedisTaskStore; prefix: string } {
  const prefix = `intake-${++prefixes}`;
  const store = new RedisTaskStore({ url, prefix });
  stores.push(store);
  const limits = new PrincipalLimits(store, { maxOpenTasks, maxOpenStreams: 0, streamLeaseMs: 0 }, systemClock);
  return { intake: new OneScriptCreation(store, queueKeys(prefix), () => ({ token: 'test-worker', lockMs: 30_000 }), limits), store, prefix };
}

/** The commands clients send to Redis while `during` runs (MONITOR; commands scripts run are left out). */
async function commandsSent(during: () => Promise<unknown>): Promise<string[]> {
  const monitor = await admin.monitor();
  const sent: string[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua') sent.push(args[0]!.toLowerCase());
  });
  try {
    await during();
    // MONITOR's feed can trail the reply by a moment: a PING on the monitored server marks its end.
    await admin.ping();
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    monitor.disconnect();
  }
  return sent.filter((command) => command !== 'ping');
}

describe('OneScriptCreation: creation on one Redis', () => {
  it('counts the task, writes it and queues its job in one command', async () => {
    const { intake: creation, store, prefix } = intake(5);
    const task = newTask();
    await creation.queued(newTask()); // loads the script, so that the measured call is a plain EVALSHA
    let created!: Awaited<ReturnType<OneScriptCreation['queued']>>;
    expect(await commandsSent(async () => (created = await creation.queued(task)))).toEqual(['evalsha']);

    expect(await store.load(task.taskId)).toEqual(created);
    expect(created.status).toBe('working');
    expect(await admin.lrange(queueKeys(prefix).waiting, 0, 0)).toEqual([task.taskId]);
    expect(await admin.zscore(openKey(prefix, 'tasks', 'alice'), task.taskId)).toBe(String(task.createdAt + task.ttlMs));
    expect(await admin.call('PEXPIRETIME', taskKey(prefix, task.taskId))).toBe(task.createdAt + task.ttlMs);
  });

  it('refuses a task over the limit with the open count, and writes and queues nothing', async () => {
    const { intake: creation, store, prefix } = intake(2);
    await creation.queued(newTask());
    await creation.queued(newTask());
    const refused = newTask();
    const error = await creation.queued(refused).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LimitExceededError);
    expect((error as LimitExceededError).data).toEqual({ limit: 2, open: 2 });
    expect(await store.load(refused.taskId)).toBeUndefined();
    expect(await admin.llen(queueKeys(prefix).waiting)).toBe(2);
    // Another principal has its own count.
    await creation.queued(newTask({ principal: 'bob' }));
  });

  it('counts nothing without a limit', async () => {
    const { intake: creation, prefix } = intake(0);
    await creation.queued(newTask());
    expect(await admin.exists(openKey(prefix, 'tasks', 'alice'))).toBe(0);
    expect(await admin.llen(queueKeys(prefix).waiting)).toBe(1);
  });

  it("refuses the id of another principal's task, and queues nothing for it", async () => {
    const { intake: creation, store, prefix } = intake(5);
    const task = newTask();
    await creation.queued(task);
    await expect(creation.queued({ ...task, principal: 'mallory' })).rejects.toThrow(/already exists/);
    expect(await admin.llen(queueKeys(prefix).waiting)).toBe(1);
    expect((await store.load(task.taskId))?.principal).toBe('alice');
  });

  it('answers the same creation sent again (a resend after a dropped connection) as created, counted and queued once', async () => {
    const { intake: creation, prefix } = intake(5);
    const task = newTask();
    const first = await creation.queued(task);
    expect(await creation.queued({ ...task })).toEqual(first);
    expect(await admin.lrange(queueKeys(prefix).waiting, 0, -1)).toEqual([task.taskId]);
    expect(await admin.zcard(openKey(prefix, 'tasks', 'alice'))).toBe(1);
  });

  it('fails fast with a retryable UnavailableError while Redis is down, leaving nothing behind', async () => {
    const own = await startRedis();
    try {
      const { intake: creation, store } = intake(1, own.url);
      await own.halt();
      const task = newTask();
      const started = performance.now();
      await expect(creation.queued(task)).rejects.toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(4_000);
      await own.restart();
      expect(await store.load(task.taskId)).toBeUndefined();
      // The principal's one slot is free.
      await creation.queued(newTask());
    } finally {
      await own.stop();
    }
  });

  describe('held by this replica (createHeld)', () => {
    /** A place that records what the creation gave back. */
    const place = (): JobPlace & { givenBack: Array<string | undefined> } => {
      const givenBack: Array<string | undefined> = [];
      return { givenBack, lease: async () => undefined, run: () => undefined, giveBack: (taskId) => void givenBack.push(taskId) };
    };

    it('counts the task, writes it and leases its job to this replica in one command, queueing nothing', async () => {
      const { intake: creation, store, prefix } = intake(5);
      await creation.held(newTask(), place()); // loads the script
      const task = newTask();
      let created!: Awaited<ReturnType<OneScriptCreation['held']>>;
      expect(await commandsSent(async () => (created = await creation.held(task, place())))).toEqual(['evalsha']);
      expect(await store.load(task.taskId)).toEqual(created);
      const keys = queueKeys(prefix);
      expect(await admin.hget(keys.owners, task.taskId)).toBe('test-worker');
      expect(Number(await admin.zscore(keys.leases, task.taskId))).toBeGreaterThan(Date.now());
      expect(await admin.zscore(keys.workers, 'test-worker')).not.toBeNull();
      expect(await admin.llen(keys.waiting)).toBe(0);
      expect(await admin.zscore(openKey(prefix, 'tasks', 'alice'), task.taskId)).toBe(String(task.createdAt + task.ttlMs));
    });

    it('refuses a task over the limit, leases nothing, and gives its place back', async () => {
      const { intake: creation, store, prefix } = intake(1);
      await creation.held(newTask(), place());
      const refused = newTask();
      const given = place();
      await expect(creation.held(refused, given)).rejects.toBeInstanceOf(LimitExceededError);
      expect(given.givenBack).toEqual([refused.taskId]);
      expect(await store.load(refused.taskId)).toBeUndefined();
      expect(await admin.hget(queueKeys(prefix).owners, refused.taskId)).toBeNull();
    });
  });
});
