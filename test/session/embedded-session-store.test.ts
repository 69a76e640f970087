import { describe, expect, it } from 'vitest';
import { EmbeddedSessionStore } from '../../src/session/embedded-session-store.js';
import { describeSessionStoreContract } from './contract.js';

describeSessionStoreContract('EmbeddedSessionStore', () => {
  // One process: a "replica" is the same data, so every open() after the first shares the first's maps
  // only when it is the same instance. maxEvents differs per instance, so a store with its own
  // maxEvents gets its own instance (the trimming test uses that one store throughout).
  const shared = new EmbeddedSessionStore();
  return {
    open: (options) => (options ? new EmbeddedSessionStore(options) : shared),
    residue: async () => shared.size,
  };
});

describe('EmbeddedSessionStore', () => {
  it('lets go of everything on close', async () => {
    const store = new EmbeddedSessionStore();
    await store.create(
      { sessionId: 's', principal: 'p', protocolVersion: '2025-11-25', clientCapabilities: {}, createdAt: Date.now() },
      60_000,
    );
    await store.addTask('s', { taskId: 't', createdAt: Date.now() }, 60_000);
    await store.holdResultStream('t', 'a', 60_000);
    // The bucket, the task's result-stream marks, the session's deadline.
    expect(store.size).toBe(3);
    await store.close();
    expect(store.size).toBe(0);
  });

  it('refuses a maxEvents that is not positive', () => {
    expect(() => new EmbeddedSessionStore({ maxEvents: 0 })).toThrow(RangeError);
  });
});
