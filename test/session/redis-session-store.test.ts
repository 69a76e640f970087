import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { RedisSessionStore } from '../../src/session/redis-session-store.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { describeSessionStoreContract } from './contract.js';

async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

function newSession(sessionId: string): SessionRecord {
  return {
    sessionId,
    principal: 'alice',
    protocolVersion: '2025-11-25',
    clientCapabilities: {},
    createdAt: Date.now(),
  };
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

// Every test gets its own prefix, so that its keys are its own.
describeSessionStoreContract('RedisSessionStore', () => {
  const prefix = `mts-sessions-${++prefixes}`;
  return {
    open: (options) => new RedisSessionStore({ url: server.url, prefix, ...options }),
    residue: async () => (await keysMatching(admin, `${prefix}:*`)).length,
  };
});

describe('RedisSessionStore layout', () => {
  const stores: RedisSessionStore[] = [];
  function open(prefix: string, options: { redis?: Redis } = {}): RedisSessionStore {
    const store = new RedisSessionStore({ url: server.url, prefix, ...options });
    stores.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  async function populate(store: RedisSessionStore, sessionId: string): Promise<void> {
    await store.create(newSession(sessionId), 60_000);
    await store.addTask(sessionId, { taskId: 'task-1', createdAt: Date.now() }, 60_000);
    await store.watchTask(sessionId, 'task-1', 60_000);
    await store.openStream(sessionId, 'g1', { kind: 'get' }, 60_000);
    await store.openStream(sessionId, 'r1', { kind: 'result', taskId: 'task-1', requestId: 4 }, 60_000);
    await store.appendEvent(sessionId, 'g1', '');
    await store.appendEvent(sessionId, 'r1', '');
  }

  it("keeps every key of a session under the session's hash tag, each with a TTL", async () => {
    const store = open('layout');
    await populate(store, 'sess-1');
    // The fleet's index of session deadlines lives apart, without a TTL: its members leave when swept or deleted.
    expect(await keysMatching(admin, 'layout:sess-*')).toEqual(['layout:sess-due:{sessions}', 'layout:sess-meta:{sessions}']);
    const keys = (await keysMatching(admin, 'layout:*')).filter((key) => !key.startsWith('layout:sess-'));
    expect(keys).toEqual(
      [
        'layout:sess:{s:sess-1}',
        'layout:sess:{s:sess-1}:seq',
        'layout:sess:{s:sess-1}:stream:g1',
        'layout:sess:{s:sess-1}:stream:r1',
        'layout:sess:{s:sess-1}:streams',
        'layout:sess:{s:sess-1}:streams-expiry',
        'layout:sess:{s:sess-1}:tasks',
        'layout:sess:{s:sess-1}:tasks-expiry',
        'layout:sess:{s:sess-1}:watch',
      ].sort(),
    );
    for (const key of keys) {
      const ttl = await admin.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(60_000);
    }
    expect(await admin.type('layout:sess:{s:sess-1}')).toBe('hash');
    expect(await admin.type('layout:sess:{s:sess-1}:tasks')).toBe('zset');
    expect(await admin.type('layout:sess:{s:sess-1}:stream:g1')).toBe('list');
    expect(await admin.lrange('layout:sess:{s:sess-1}:stream:g1', 0, -1)).toEqual([expect.stringMatching(/^\{"seq":\d+,"data":""\}$/)]);
  });

  it("deletes every key carrying the session's tag, and only those", async () => {
    const store = open('delete');
    await populate(store, 'doomed');
    await populate(store, 'kept');
    await store.holdResultStream('task-1', 'holder', 60_000);
    expect(await open('delete').delete('doomed')).toBe(true);
    expect(await keysMatching(admin, '*{s:doomed}*')).toEqual([]);
    expect((await keysMatching(admin, 'delete:*{s:kept}*')).length).toBe(9);
    expect(await keysMatching(admin, 'delete:rs:*')).toEqual(['delete:rs:{task-1}']);
  });

  it('keeps result-stream marks in one hash per task, under the task id as hash tag', async () => {
    const store = open('marks');
    await store.holdResultStream('task-1', 'a', 60_000);
    await store.holdResultStream('task-1', 'b', 30_000);
    expect(await keysMatching(admin, 'marks:*')).toEqual(['marks:rs:{task-1}']);
    expect((await admin.hkeys('marks:rs:{task-1}')).sort()).toEqual(['a', 'b']);
    expect(await admin.pttl('marks:rs:{task-1}')).toBeGreaterThan(30_000);
    await store.releaseResultStream('task-1', 'a');
    await store.releaseResultStream('task-1', 'b');
    expect(await keysMatching(admin, 'marks:*')).toEqual([]);
  });

  it('refuses a prefix with braces, which would move the hash tag', () => {
    expect(() => new RedisSessionStore({ url: server.url, prefix: 'mts{x}' })).toThrow(/prefix/);
  });

  it('leaves a caller-supplied client open when it closes', async () => {
    const redis = new Redis(server.url);
    try {
      const store = new RedisSessionStore({ redis, prefix: 'shared' });
      await store.create(newSession('s'), 1_000);
      await store.close();
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });

  it('shares one client with a task store without their scripts colliding', async () => {
    const redis = new Redis(server.url);
    try {
      const { RedisTaskStore } = await import('../../src/store/redis/redis-store.js');
      const tasks = new RedisTaskStore({ redis, prefix: 'both' });
      const sessions = new RedisSessionStore({ redis, prefix: 'both' });
      await sessions.create(newSession('s'), 1_000);
      expect(await tasks.load('nope')).toBeUndefined();
      expect((await sessions.get('s', 1_000))?.sessionId).toBe('s');
      await Promise.all([tasks.close(), sessions.close()]);
    } finally {
      await redis.quit();
    }
  });
});

describe('RedisSessionStore request cancels', () => {
  const stores: RedisSessionStore[] = [];
  function open(prefix: string): RedisSessionStore {
    const store = new RedisSessionStore({ url: server.url, prefix });
    stores.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it('publishes on one channel under its prefix, and hears only the cancels of its own prefix', async () => {
    const mine = open('cancels-a');
    const heard: unknown[] = [];
    mine.onRequestCancel((cancel) => heard.push(cancel));
    await mine.requestCancelsReady();
    const other = open('cancels-b');
    await other.publishCancel({ sessionId: 's', requestId: 'elsewhere' });
    await open('cancels-a').publishCancel({ sessionId: 's', requestId: 'here' });
    await vi.waitFor(() => expect(heard).toEqual([{ sessionId: 's', requestId: 'here' }]), { timeout: 5_000 });
    expect(await admin.pubsub('CHANNELS', 'cancels-*')).toEqual(['cancels-a:sess-cancels']);
  });

  it('ignores anything on its channel that is not a cancel', async () => {
    const store = open('cancels-stray');
    const heard: unknown[] = [];
    store.onRequestCancel((cancel) => heard.push(cancel));
    await store.requestCancelsReady();
    for (const stray of ['not json', 'null', '[]', '{"sessionId":"s"}', '{"sessionId":1,"requestId":1}', '{"sessionId":"s","requestId":{}}']) {
      await admin.publish('cancels-stray:sess-cancels', stray);
    }
    await store.publishCancel({ sessionId: 's', requestId: 2 });
    await vi.waitFor(() => expect(heard).toEqual([{ sessionId: 's', requestId: 2 }]), { timeout: 5_000 });
  });

  it('closes its subscriber connection with the store', async () => {
    const store = open('cancels-closed');
    store.onRequestCancel(() => undefined);
    await store.requestCancelsReady();
    expect(await admin.pubsub('NUMSUB', 'cancels-closed:sess-cancels')).toEqual(['cancels-closed:sess-cancels', 1]);
    await store.close();
    await vi.waitFor(async () => expect(await admin.pubsub('NUMSUB', 'cancels-closed:sess-cancels')).toEqual(['cancels-closed:sess-cancels', 0]), { timeout: 5_000 });
    await expect(store.requestCancelsReady()).rejects.toThrow('Session store is closed');
  });
});

describe('RedisSessionStore when Redis goes away', () => {
  let own: RedisServer;
  beforeAll(async () => {
    own = await startRedis({ appendonly: true });
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('reloads its scripts after a restart, and fails with a retryable UnavailableError while Redis is stopped', async () => {
    const redis = new Redis(own.url, { maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    const store = new RedisSessionStore({ redis, prefix: 'down' });
    try {
      await store.create(newSession('s'), 60_000);
      await own.restart();
      // The restart emptied Redis's script cache; the store must load its scripts again.
      await expect
        .poll(async () => (await store.get('s', 60_000).catch(() => undefined))?.sessionId, { timeout: 10_000 })
        .toBe('s');
      await own.stop();
      await expect(store.get('s', 60_000)).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.appendEvent('s', 'g1', '')).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.publishCancel({ sessionId: 's', requestId: 1 })).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await own.restart();
      await store.close();
      redis.disconnect();
    }
  });
});
