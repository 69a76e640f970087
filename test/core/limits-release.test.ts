import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LimitExceededError } from '../../src/core/errors.js';
import { PrincipalLimits } from '../../src/core/limits.js';
import { systemClock } from '../../src/core/ports.js';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

let redis: RedisServer;
let store: RedisTaskStore;

beforeAll(async () => {
  // AOF: the count must survive the restart, so that only the release can free the slot.
  redis = await startRedis({ appendonly: true, appendfsync: 'always' });
  store = new RedisTaskStore({ url: redis.url, prefix: 'limits' });
  await store.subscriptionReady();
}, 30_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
});

describe('the open-task count when a creation fails', () => {
  it('gives the slot back once Redis answers again, instead of holding it until the TTL', { timeout: 30_000 }, async () => {
    const limits = new PrincipalLimits(store, { maxOpenTasks: 1, maxOpenStreams: 0, streamLeaseMs: 10_000 }, systemClock);
    const expiresAt = Date.now() + 60 * 60 * 1000;
    await limits.admitTask('carol', 'first', expiresAt);
    await expect(limits.admitTask('carol', 'second', expiresAt)).rejects.toBeInstanceOf(LimitExceededError);

    // Redis stops answering right when the failed creation releases its slot.
    await redis.halt();
    const released = limits.forgetTask('carol', 'first');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await redis.restart();
    await released;
    await limits.admitTask('carol', 'second', expiresAt);
  });
});
