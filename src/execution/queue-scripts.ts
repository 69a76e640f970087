import type { RedisConnection } from '../store/redis/connection.js';
import { defineScripts, type RunKeysScript } from '../store/redis/scripts.js';

const KEY_COUNTS = { take: 6, renew: 3, reclaim: 5, done: 3, release: 2 } as const;
export type QueueScript = keyof typeof KEY_COUNTS;

/** The queue scripts of `names` (src/execution/lua), defined on `redis`. */
export function defineQueueScripts<Name extends QueueScript>(redis: RedisConnection, names: readonly Name[]): Record<Name, RunKeysScript> {
  return defineScripts(redis, { dir: new URL('./lua/', import.meta.url), names, common: true, keyCounts: KEY_COUNTS });
}
