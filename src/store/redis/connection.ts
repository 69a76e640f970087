import { Redis, ReplyError } from 'ioredis';
import { UnavailableError } from '../../core/errors.js';

/** How every Redis-backed store gets its connection. */
export interface RedisClientOptions {
  /** Used when `redis` is not given; the store then owns (and on close quits) that connection. */
  url?: string;
  /** A client the caller owns: the store defines its scripts on it but never quits it. */
  redis?: Redis;
}

export interface RedisClient {
  redis: Redis;
  /** True when the store opened the connection itself and so must close it. */
  owned: boolean;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A health check must answer quickly even while ioredis holds commands back during a reconnect. */
const PING_TIMEOUT_MS = 1_000;

export function openRedis(options: RedisClientOptions): RedisClient {
  if (options.redis) return { redis: options.redis, owned: false };
  // Concurrent requests share socket writes (one write per event-loop tick, not per command).
  const redis = new Redis(options.url ?? DEFAULT_REDIS_URL, { enableAutoPipelining: true });
  // Connection trouble reaches callers as UnavailableError (and through ping()); without a
  // listener ioredis would also print every failed reconnect attempt.
  redis.on('error', () => {});
  return { redis, owned: true };
}

/** Redis errors are bugs; anything else means Redis could not be reached, which a client may retry. */
export async function callRedis<T>(what: string, command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (error) {
    if (error instanceof ReplyError) throw error;
    const unavailable = new UnavailableError(what);
    unavailable.cause = error;
    throw unavailable;
  }
}

/** True when Redis answers PING within a second; false while it is down or reconnecting. */
export async function pingRedis(redis: Redis): Promise<boolean> {
  const status = redis.status;
  if (status === 'reconnecting' || status === 'close' || status === 'end') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), PING_TIMEOUT_MS);
  });
  try {
    return (await Promise.race([redis.ping(), timeout])) === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** QUIT waits for queued commands, which never run while Redis is down; then only disconnect ends it. */
export async function disconnect(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') return client.disconnect();
  await client.quit().catch(() => client.disconnect());
}
