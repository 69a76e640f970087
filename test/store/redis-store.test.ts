import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import type { NewTask } from '../../src/core/task.js';
import { openKey } from '../../src/store/redis/keys.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { describeTaskStoreContract } from './contract.js';
import { newTask as newStoreTask } from '../support/new-task.js';

const WAIT = { timeout: 5_000, interval: 20 };

/** These tasks come from a legacy session. */
function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return newStoreTask({ origin: 'mcp-2025-11-25', ...overrides });
}

async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

let server: RedisServer;
let admin: Redis;
let prefixes = 0;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
});

afterAll(async () => {
  await admin?.quit();
  await server?.stop();
});

// Every test gets its own prefix, so that its keys and events are its own.
describeTaskStoreContract('RedisTaskStore', () => {
  const prefix = `mts-contract-${++prefixes}`;
  return {
    open: () => new RedisTaskStore({ url: server.url, prefix }),
    residue: async () => (await keysUnder(admin, prefix)).length,
  };
});

describe('RedisTaskStore layout', () => {
  const stores: RedisTaskStore[] = [];
  function open(options: { prefix: string; redis?: Redis }): RedisTaskStore {
    const store = new RedisTaskStore({ url: server.url, ...options });
    stores.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it('keeps a task in one hash whose hash tag is the task id', async () => {
    const { taskId } = await open({ prefix: 'layout' }).create(newTask());
    expect(await keysUnder(admin, 'layout')).toEqual([`layout:task:{${taskId}}`]);
    expect(await admin.type(`layout:task:{${taskId}}`)).toBe('hash');
  });

  it('sets the key to expire at createdAt + ttlMs and keeps that expiry through every change', async () => {
    const store = open({ prefix: 'expiry' });
    const { taskId, createdAt } = await store.create(newTask());
    const key = `expiry:task:{${taskId}}`;
    expect(await admin.call('PEXPIRETIME', key)).toBe(createdAt + 60_000);
    await store.markStarted(taskId, Date.now());
    await store.requestInput(taskId, 'q1', { method: 'roots/list', params: {} }, Date.now());
    await store.answerInput(taskId, 'alice', { q1: { roots: [] } }, Date.now());
    await store.finish(taskId, { status: 'completed', result: { content: [] } }, Date.now());
    expect(await admin.call('PEXPIRETIME', key)).toBe(createdAt + 60_000);
  });

  it("keeps a principal's open set until its latest member lapses, whatever order members come in", async () => {
    const store = open({ prefix: 'open-expiry' });
    const key = openKey('open-expiry', 'streams', 'alice');
    const base = Date.now() + 60_000;
    await store.holdOpen('streams', 'alice', 'a', base, -1, Date.now());
    expect(await admin.call('PEXPIRETIME', key)).toBe(base);
    await store.holdOpen('streams', 'alice', 'b', base + 5_000, -1, Date.now());
    expect(await admin.call('PEXPIRETIME', key)).toBe(base + 5_000);
    // An earlier lapse leaves the set to the later member's.
    await store.holdOpen('streams', 'alice', 'c', base + 1_000, -1, Date.now());
    expect(await admin.call('PEXPIRETIME', key)).toBe(base + 5_000);
  });

  it('gives a queued task\'s open set the task\'s own expiry', async () => {
    const store = open({ prefix: 'open-queued' });
    const creation = await store.createQueued(newTask({ principal: 'alice' }), 'open-queued:q', 10);
    if (!creation.created) throw new Error('not created');
    expect(await admin.call('PEXPIRETIME', openKey('open-queued', 'tasks', 'alice'))).toBe(creation.task.createdAt + creation.task.ttlMs);
  });

  it("says how many tasks the principal holds after a queued creation, when they are counted (the metrics' limit usage)", async () => {
    const store = open({ prefix: 'open-count' });
    expect(await store.createQueued(newTask({ principal: 'alice' }), 'open-count:q', 10)).toMatchObject({ created: true, open: 1 });
    expect(await store.createQueued(newTask({ principal: 'alice' }), 'open-count:q', 10)).toMatchObject({ created: true, open: 2 });
    expect(await store.createQueued(newTask({ principal: 'alice' }), 'open-count:q', 2)).toEqual({ created: false, open: 2 });
    const uncounted = await store.createQueued(newTask({ principal: 'alice' }), 'open-count:q', 0);
    expect(Object.keys(uncounted).sort()).toEqual(['created', 'task']);
  });

  it('stores JSON values as text that no script rewrites', async () => {
    const { taskId } = await open({ prefix: 'json' }).create(newTask({ arguments: { empty: {}, big: 2 ** 60 } }));
    expect(await admin.hget(`json:task:{${taskId}}`, 'arguments')).toBe('{"empty":{},"big":1152921504606847000}');
  });

  it('reads a task past its deadline as gone on our clock, while Redis still holds it, whole or polled', async () => {
    const store = open({ prefix: 'late' });
    for (const waiting of [false, true]) {
      const { taskId } = await store.create(newTask({ principal: 'alice' }));
      if (waiting) await store.requestInput(taskId, 'q1', { method: 'roots/list', params: {} }, Date.now());
      const key = `late:task:{${taskId}}`;
      // A Redis whose clock is behind ours would still hold the hash.
      await admin.persist(key);
      await admin.hset(key, 'createdAt', String(Date.now() - 60_000));
      expect(await store.get(taskId, 'alice')).toBeUndefined();
      expect(await store.load(taskId)).toBeUndefined();
      expect(await store.poll(taskId, 'alice')).toBeUndefined();
      await admin.hset(key, 'createdAt', String(Date.now() - 59_000));
      expect((await store.poll(taskId, 'alice'))?.status).toBe(waiting ? 'input_required' : 'working');
      await admin.del(key);
    }
  });

  it('polls a task without reading the fields no status answer shows', async () => {
    const store = open({ prefix: 'lean' });
    const { taskId } = await store.create(newTask({ principal: 'alice' }));
    await admin.hset(`lean:task:{${taskId}}`, 'arguments', 'not json');
    await expect(store.get(taskId, 'alice')).rejects.toThrow(SyntaxError);
    expect((await store.poll(taskId, 'alice'))?.status).toBe('working');
  });

  it('keeps stores with different prefixes apart', async () => {
    const { taskId } = await open({ prefix: 'tenant-a' }).create(newTask());
    expect(await open({ prefix: 'tenant-b' }).load(taskId)).toBeUndefined();
  });

  it('refuses a prefix with braces, which would pin every task to one cluster slot', () => {
    expect(() => new RedisTaskStore({ url: server.url, prefix: 'mts{x}' })).toThrow(/prefix/);
  });

  it('leaves a caller-supplied client open when it closes', async () => {
    const redis = new Redis(server.url);
    try {
      const store = new RedisTaskStore({ redis, prefix: 'shared' });
      store.subscribe(() => {});
      await store.subscriptionReady();
      await store.close();
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });
});

describe('RedisTaskStore when Redis goes away', () => {
  let own: RedisServer;
  const stores: RedisTaskStore[] = [];
  const clients: Redis[] = [];

  beforeAll(async () => {
    own = await startRedis({ appendonly: true });
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    clients.splice(0).forEach((client) => client.disconnect());
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('answers ping false while Redis is stopped and true again once it is back', async () => {
    const store = new RedisTaskStore({ url: own.url, prefix: 'ping' });
    stores.push(store);
    expect(await store.ping()).toBe(true);
    await own.stop();
    await vi.waitFor(async () => expect(await store.ping()).toBe(false), WAIT);
    await own.restart();
    await vi.waitFor(async () => expect(await store.ping()).toBe(true), WAIT);
  });

  it('fails with a retryable UnavailableError, not a hang, while Redis is stopped', async () => {
    const redis = new Redis(own.url, { maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    clients.push(redis);
    const store = new RedisTaskStore({ redis, prefix: 'down' });
    stores.push(store);
    const { taskId } = await store.create(newTask());
    await own.stop();
    try {
      await expect(store.load(taskId)).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.finish(taskId, { status: 'completed', result: {} }, Date.now())).rejects.toBeInstanceOf(
        UnavailableError,
      );
    } finally {
      await own.restart();
    }
  });

  it('keeps serving persisted tasks, scripts included, after Redis restarts', async () => {
    const store = new RedisTaskStore({ url: own.url, prefix: 'restart' });
    stores.push(store);
    const { taskId } = await store.create(newTask());
    await own.restart();
    expect((await store.load(taskId))?.status).toBe('working');
    // The restart emptied Redis's script cache; the store must load its scripts again.
    expect(await store.finish(taskId, { status: 'completed', result: { content: [] } }, Date.now())).toBe(true);
    expect((await store.load(taskId))?.status).toBe('completed');
  });

  it('resumes delivering changes after Redis restarts', async () => {
    const listener = new RedisTaskStore({ url: own.url, prefix: 'resub' });
    const writer = new RedisTaskStore({ url: own.url, prefix: 'resub' });
    stores.push(listener, writer);
    const changes: string[] = [];
    listener.subscribe((change) => changes.push(change.taskId));
    await listener.subscriptionReady();
    await own.restart();
    const { taskId } = await writer.create(newTask());
    // Until the subscriber has reconnected and resubscribed, a change can be missed, so keep changing.
    await vi.waitFor(async () => {
      await writer.setStatusMessage(taskId, `tick ${Date.now()}`, Date.now());
      expect(changes).toContain(taskId);
    }, WAIT);
  });
});
