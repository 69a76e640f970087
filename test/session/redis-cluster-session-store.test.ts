import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/session/redis-session-store.js';
import { clusterKeys, keySlot } from '../support/cluster-keys.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { describeSessionStoreContract } from './contract.js';

let cluster: RedisCluster;
let prefixes = 0;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

// The same contract as on a single Redis; every replica is its own Cluster client.
describeSessionStoreContract('RedisSessionStore on a Redis Cluster', () => {
  const prefix = `mts-cluster-sessions-${++prefixes}`;
  return {
    open: (options) => new RedisSessionStore({ url: cluster.url, cluster: true, prefix, ...options }),
    residue: async () => (await clusterKeys(cluster, `${prefix}:*`)).length,
  };
});

describe('RedisSessionStore slots on a Redis Cluster', () => {
  const stores: RedisSessionStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it("keeps every key of a session in the session's one slot, and deletes them all", async () => {
    const store = new RedisSessionStore({ url: cluster.url, cluster: true, prefix: 'slots' });
    stores.push(store);
    const sessionId = 'sess-slot';
    await store.create({ sessionId, principal: 'alice', protocolVersion: '2025-11-25', clientCapabilities: {}, createdAt: Date.now() }, 60_000);
    await store.addTask(sessionId, { taskId: 'task-1', createdAt: Date.now() }, 60_000);
    await store.watchTask(sessionId, 'task-1', 60_000);
    await store.openStream(sessionId, 'g1', { kind: 'get' }, 60_000);
    await store.appendEvent(sessionId, 'g1', '');
    await store.keepStreamOpen(sessionId, 'g1', 60_000);
    await store.claimPush(sessionId, 'task:task-1:q1', 'g1', 60_000);
    const index = ['slots:sess-due:{sessions}', 'slots:sess-meta:{sessions}'];
    const keys = (await clusterKeys(cluster, 'slots:*')).filter((key) => !index.includes(key));
    expect((await clusterKeys(cluster, 'slots:sess-*')).sort()).toEqual(index);
    const tag = `slots:sess:{s:${sessionId}}`;
    const parts = ['', ':live', ':pushes', ':seq', ':stream:g1', ':streams', ':streams-expiry', ':tasks', ':tasks-expiry', ':watch'];
    expect(keys).toEqual(parts.map((part) => tag + part).sort());
    const slots = await Promise.all(keys.map((key) => keySlot(cluster, key)));
    expect(new Set(slots)).toEqual(new Set([await keySlot(cluster, `{s:${sessionId}}`)]));
    expect(await store.delete(sessionId)).toBe(true);
    expect(await clusterKeys(cluster, 'slots:*')).toEqual([]);
  });

  it('serves concurrent multi-key operations on sessions in different slots', async () => {
    const store = new RedisSessionStore({ url: cluster.url, cluster: true, prefix: 'concurrent' });
    stores.push(store);
    const ids = Array.from({ length: 20 }, (_, i) => `sess-${i}`);
    await Promise.all(ids.map((sessionId) => store.create({ sessionId, principal: 'alice', protocolVersion: '2025-11-25', clientCapabilities: {}, createdAt: Date.now() }, 60_000)));
    await Promise.all(ids.map((sessionId) => store.openStream(sessionId, 'g1', { kind: 'get' }, 60_000)));
    const eventIds = await Promise.all(ids.map((sessionId) => store.appendEvent(sessionId, 'g1', `"${sessionId}"`)));
    expect(eventIds.every((id) => id.startsWith('g1_'))).toBe(true);
    const deleted = await Promise.all(ids.map((sessionId) => store.delete(sessionId)));
    expect(deleted.every(Boolean)).toBe(true);
  });
});
