import { describe, expect, it } from 'vitest';
import { EmbeddedSessionStore } from '../../../src/session/embedded-session-store.js';
import type { SessionRecord } from '../../../src/session/session-store.js';
import { SessionCache } from '../../../src/wire/legacy/session-cache.js';

const IDLE_TTL_MS = 60_000;

function session(sessionId: string): SessionRecord {
  return { sessionId, principal: 'alice', protocolVersion: '2025-11-25', clientCapabilities: {}, createdAt: Date.now() };
}

async function setup() {
  const store = new EmbeddedSessionStore();
  await store.create(session('s1'), IDLE_TTL_MS);
  let now = 1_000_000;
  const cache = new SessionCache(store, IDLE_TTL_MS, () => now);
  return { store, cache, advance: (ms: number) => (now += ms) };
}

describe('SessionCache', () => {
  it('serves a forwarded request from the read of the last second, without going to the store', async () => {
    const { store, cache, advance } = await setup();
    expect((await cache.get('s1'))?.usesTasksCreate).toBeUndefined();
    await store.update('s1', { usesTasksCreate: true });
    advance(999);
    expect((await cache.get('s1'))?.usesTasksCreate).toBeUndefined();
  });

  it('answers a session read within the window at once, without a promise', async () => {
    const { cache } = await setup();
    const first = cache.get('s1');
    expect(first).toBeInstanceOf(Promise);
    await first;
    const fresh = cache.get('s1');
    expect(fresh).not.toBeInstanceOf(Promise);
    expect((fresh as SessionRecord).sessionId).toBe('s1');
  });

  it('reads the store again once the window has passed', async () => {
    const { store, cache, advance } = await setup();
    await cache.get('s1');
    await store.update('s1', { usesTasksCreate: true });
    advance(1_000);
    expect((await cache.get('s1'))?.usesTasksCreate).toBe(true);
  });

  it('always reads the store for a task method, and remembers what it read', async () => {
    const { store, cache } = await setup();
    await cache.get('s1');
    await store.update('s1', { usesTasksCreate: true });
    expect((await cache.read('s1'))?.usesTasksCreate).toBe(true);
    await store.update('s1', { usesTasksCreate: false });
    expect((await cache.get('s1'))?.usesTasksCreate).toBe(true);
  });

  it('forgets a deleted session at once on this replica', async () => {
    const { store, cache } = await setup();
    await cache.get('s1');
    cache.forget('s1');
    await store.delete('s1');
    expect(await cache.get('s1')).toBeUndefined();
  });

  it('keeps a short idle TTL from lapsing: the window is a tenth of it', async () => {
    const store = new EmbeddedSessionStore();
    await store.create(session('s2'), 2_000);
    let now = 0;
    const cache = new SessionCache(store, 2_000, () => now);
    await cache.get('s2');
    await store.update('s2', { usesTasksCreate: true });
    now += 200;
    expect((await cache.get('s2'))?.usesTasksCreate).toBe(true);
  });

  it('answers undefined for an unknown session and caches nothing for it', async () => {
    const { store, cache } = await setup();
    expect(await cache.get('nope')).toBeUndefined();
    await store.create(session('nope'), IDLE_TTL_MS);
    expect((await cache.get('nope'))?.sessionId).toBe('nope');
  });
});
