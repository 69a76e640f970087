import { afterAll, beforeAll } from 'vitest';
import { startBadTaskUpstream, type BadTaskUpstream } from '../fixtures/bad-task-upstream.js';
import type { StoreKind } from './e2e-stack.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { startShimProcess, type ShimProcess } from './shim-process.js';

/** A redis-server, the upstream that gets tasks wrong on purpose (test/fixtures/bad-task-upstream.ts) and a shim per store. */
export function useBadUpstreamStack(stores: StoreKind[]): { shim(kind: StoreKind): ShimProcess } {
  let redis: RedisServer | undefined;
  let upstream: BadTaskUpstream | undefined;
  const shims = new Map<StoreKind, ShimProcess>();

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startBadTaskUpstream()]);
    for (const kind of stores) shims.set(kind, await startShimProcess({ upstreamUrl: upstream.url, redisUrl: kind === 'redis' ? redis.url : undefined }));
  });

  afterAll(async () => {
    await Promise.all([...shims.values()].map((shim) => shim.stop()));
    await upstream?.close();
    await redis?.stop();
  });

  return {
    shim(kind) {
      const shim = shims.get(kind);
      if (!shim) throw new Error(`no ${kind} shim in this stack`);
      return shim;
    },
  };
}
