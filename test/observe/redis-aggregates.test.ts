import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_RETENTION_MS, MAX_CLIENTS, type ClientRecord, type ClientSeen, type FlushBatch } from '../../src/observe/aggregates.js';
import { HOUR_MS, HOUR_RETENTION_MS, MINUTE_MS, MINUTE_RETENTION_MS } from '../../src/observe/layout.js';
import { RedisAggregateStore } from '../../src/observe/redis-aggregates.js';
import { pollUntil } from '../support/sep2663-client.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

function batch(now: number, parts: Partial<FlushBatch> = {}): FlushBatch {
  return { minutes: new Map(), hours: new Map(), clients: new Map(), gaps: 0, dropped: 0, events: 0, since: now, now, ...parts };
}

function seen(name: string, at: number, old = true): ClientSeen {
  return old ? { identity: { name, version: '1', principal: 'p' }, firstOld: at, lastOld: at } : { identity: { name, version: '1', principal: 'p' }, firstNew: at, lastNew: at };
}

describe('the Redis aggregates', () => {
  let redis: RedisServer;
  let store: RedisAggregateStore;
  let raw: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    store = new RedisAggregateStore({ url: redis.url, prefix: 'agg' });
    raw = new Redis(redis.url);
    raw.on('error', () => undefined); // the last test stops Redis under it
    await pollUntil(async () => store.ready(), Boolean);
  });
  afterAll(async () => {
    await store?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it('adds batches of every replica into shared minute and hour buckets, each with a bounded lifetime', async () => {
    const now = Date.now();
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    const counters = () => new Map([['q|sep2663|ping|ok', 2]]);
    for (let i = 0; i < 2; i++) {
      await store.write(batch(now, { minutes: new Map([[minute, counters()]]), hours: new Map([[hour, counters()]]) }));
    }
    const [m] = await store.readBuckets('m', [minute]);
    const [h] = await store.readBuckets('h', [hour]);
    expect(m?.get('q|sep2663|ping|ok')).toBe(4);
    expect(h?.get('q|sep2663|ping|ok')).toBe(4);
    const keys = await raw.keys('agg:obs:*');
    expect(keys.every((key) => key.startsWith('agg:obs:{agg:obs}:'))).toBe(true);
    const minuteTtl = await raw.pttl(`agg:obs:{agg:obs}:m:${minute}`);
    const hourTtl = await raw.pttl(`agg:obs:{agg:obs}:h:${hour}`);
    expect(minuteTtl).toBeGreaterThan(MINUTE_RETENTION_MS - 2 * MINUTE_MS);
    expect(minuteTtl).toBeLessThanOrEqual(MINUTE_RETENTION_MS);
    expect(hourTtl).toBeGreaterThan(HOUR_RETENTION_MS - 2 * HOUR_MS);
    expect(hourTtl).toBeLessThanOrEqual(HOUR_RETENTION_MS);
  });

  it('keeps the first and last sightings across replicas, whatever order the flushes land in', async () => {
    const t = Date.now();
    await store.write(batch(t, { clients: new Map([['c1', seen('alpha', t)]]) }));
    await store.write(batch(t, { clients: new Map([['c1', seen('alpha', t - 5_000)]]) }));
    await store.write(batch(t, { clients: new Map([['c1', { ...seen('alpha', t + 5_000), firstOld: t + 1_000 }]]) }));
    await store.write(batch(t, { clients: new Map([['c1', seen('alpha', t + 2_000, false)]]) }));
    const client = (await store.readClients()).find((c) => c.id === 'c1');
    expect(client).toEqual({ id: 'c1', identity: { name: 'alpha', version: '1', principal: 'p' }, firstOld: t - 5_000, lastOld: t + 5_000, firstNew: t + 2_000, lastNew: t + 2_000 });
  });

  it(`holds at most ${MAX_CLIENTS} clients, dropping those seen longest ago, and records gaps and the start of recording`, async () => {
    const t = Date.now();
    const clients = new Map<string, ClientSeen>();
    for (let i = 0; i < MAX_CLIENTS + 50; i++) clients.set(`bulk-${i}`, seen(`bulk-${i}`, t + i));
    await store.write(batch(t, { clients, gaps: 3, since: t - 60_000 }));
    await store.write(batch(t, { gaps: 1, since: t }));
    const all = await store.readClients();
    expect(all).toHaveLength(MAX_CLIENTS);
    const ids = new Set(all.map((c) => c.id));
    expect(ids.has('bulk-0')).toBe(false);
    expect(ids.has(`bulk-${MAX_CLIENTS + 49}`)).toBe(true);
    const meta = await store.readMeta();
    expect(meta.gaps).toBe(4);
    expect(meta.since).toBe(t - 60_000); // the earliest any replica wrote, never moved later
  });

  it('after a first whole read, reads only the clients changed since, and the same table a whole read gives', async () => {
    const prefix = 'inc';
    const writer = new RedisAggregateStore({ url: redis.url, prefix });
    const reader = new RedisAggregateStore({ url: redis.url, prefix });
    await pollUntil(async () => writer.ready() && reader.ready(), Boolean);
    const byId = (clients: ClientRecord[]) => [...clients].sort((a, b) => a.id.localeCompare(b.id));
    /** What a replica that never read the table before reads. */
    const whole = async () => {
      const fresh = new RedisAggregateStore({ url: redis.url, prefix });
      await pollUntil(async () => fresh.ready(), Boolean);
      try {
        return byId(await fresh.readClients());
      } finally {
        await fresh.close();
      }
    };
    try {
      const t = Date.now();
      await writer.write(batch(t, { clients: new Map([['c1', seen('alpha', t)], ['c2', seen('beta', t, false)]]) }));
      const first = await reader.readClients();
      expect(byId(first)).toEqual(await whole());

      // A later sighting of c2, and c3 first seen hours ago (a replica flushing late): taken in, c1 untouched.
      await writer.write(batch(t, { clients: new Map([['c2', seen('beta', t + 1_000)], ['c3', seen('gamma', t - 3 * HOUR_MS)]]) }));
      const second = await reader.readClients();
      expect(byId(second)).toEqual(await whole());
      expect(second).toHaveLength(3);
      expect(second.find((c) => c.id === 'c1')).toBe(first.find((c) => c.id === 'c1'));
      expect(second.find((c) => c.id === 'c2')).toMatchObject({ lastOld: t + 1_000, lastNew: t });

      // Clients leave the table (not seen for the retention period): the size tells, the table is read whole.
      const later = t + CLIENT_RETENTION_MS + HOUR_MS;
      await writer.write(batch(later, { clients: new Map([['c4', seen('delta', later)]]) }));
      expect(byId(await reader.readClients())).toEqual(await whole());
      expect((await reader.readClients()).map((c) => c.id)).toEqual(['c4']);

      // The table expired and started again: its change sequence is behind the one the reader saw.
      for (const key of await raw.keys(`${prefix}:obs:{${prefix}:obs}:clients:*`)) await raw.del(key);
      await writer.write(batch(t, { clients: new Map([['c5', seen('epsilon', t)]]) }));
      expect(byId(await reader.readClients())).toEqual(await whole());
      expect((await reader.readClients()).map((c) => c.id)).toEqual(['c5']);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('writes and reads the client table by changes after Redis forgot its scripts, counting each flush once', async () => {
    const t = Date.now();
    const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    await store.write(batch(t, { clients: new Map([['flush-1', seen('before', t)]]) }));
    await store.readClients();
    await raw.script('FLUSH');
    const counters = new Map([['q|sep2663|flush|ok', 1]]);
    await store.write(batch(t, { minutes: new Map([[minute, counters]]), clients: new Map([['flush-2', seen('after', t)]]) }));
    const [bucket] = await store.readBuckets('m', [minute]);
    expect(bucket?.get('q|sep2663|flush|ok')).toBe(1);
    await raw.script('FLUSH');
    const ids = (await store.readClients()).map((client) => client.id);
    expect(ids).toContain('flush-1');
    expect(ids).toContain('flush-2');
  });

  it('fails a write at once, applying nothing, while Redis is down', async () => {
    await redis.halt();
    const t = Date.now();
    const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    await expect(store.write(batch(t, { minutes: new Map([[minute, new Map([['q|sep2663|ping|ok', 1]])]]) }))).rejects.toThrow();
    await expect(store.readMeta()).rejects.toThrow();
    await redis.restart();
  });
});

describe('the Redis aggregates on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let store: RedisAggregateStore;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    store = new RedisAggregateStore({ url: cluster.url, prefix: 'aggc', cluster: true });
    await pollUntil(async () => store.ready(), Boolean);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('writes and reads buckets and the client table, whole and by changes, in one hash slot', async () => {
    const t = Date.now();
    const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    const counters = new Map([['q|sep2663|ping|ok', 3]]);
    await store.write(batch(t, { minutes: new Map([[minute, counters]]), clients: new Map([['c1', seen('alpha', t)]]) }));
    expect((await store.readBuckets('m', [minute, minute - MINUTE_MS])).map((bucket) => [...bucket])).toEqual([[['q|sep2663|ping|ok', 3]], []]);
    expect((await store.readClients()).map((c) => c.id)).toEqual(['c1']);
    await store.write(batch(t, { clients: new Map([['c2', seen('beta', t + 1)]]) }));
    expect((await store.readClients()).map((c) => c.id).sort()).toEqual(['c1', 'c2']);
  });
});
