import { Cluster, Redis, ReplyError, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Socket } from 'node:net';
import { UnavailableError } from '../../core/errors.js';

/** A single Redis or a Redis Cluster: every store, the queue and the aggregates run on either. */
export type RedisConnection = Redis | Cluster;

/** Where Redis is: one URL, or with `cluster` one or more comma-separated seed node URLs. */
export interface RedisTarget {
  url: string;
  cluster?: boolean;
}

/** How every Redis-backed store gets its connection. */
export interface RedisClientOptions {
  /** Used when `redis` is not given; the store then owns (and on close quits) that connection. */
  url?: string;
  /** `url` lists seed nodes of a Redis Cluster. */
  cluster?: boolean;
  /** A client the caller owns: the store defines its scripts on it but never quits it. */
  redis?: RedisConnection;
}

export interface RedisClient {
  redis: RedisConnection;
  /** True when the store opened the connection itself and so must close it. */
  owned: boolean;
}

/**
 * What a connection is for:
 * - `commands`: request-path commands, which must fail fast while Redis is down (see REQUEST_DEADLINE_MS);
 * - `waiting`: SUBSCRIBE and the work queue's blocking BLMOVE, which wait out an outage instead of failing;
 * - `unqueued`: no offline queue at all, for writers that keep their data in memory until Redis is back.
 */
export type ConnectionRole = 'commands' | 'waiting' | 'unqueued';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * How long a store command may go unanswered before its connection is looked at: one that is not
 * connected (reconnecting, or a Redis Cluster holding the command in its offline queue, which
 * ioredis never flushes while it reconnects) gives its caller a retryable UnavailableError now.
 */
const REQUEST_DEADLINE_MS = 1_500;

/**
 * The longest a command on a connected Redis may take. Past REQUEST_DEADLINE_MS a connected
 * Redis is slow, not gone: a saturated host (or this process's own event loop) delays answers
 * that are on their way, and failing them would turn load into errors. A Redis that holds its
 * connection open but never answers (stopped, or partitioned without a reset) costs this long.
 */
const SLOW_ANSWER_LIMIT_MS = 8_000;

export interface AnswerDeadlines {
  /** Unanswered this long on a connection that is not ready: unavailable. */
  requestMs: number;
  /** Unanswered this long at all: unavailable. */
  limitMs: number;
}

const DEADLINES: AnswerDeadlines = { requestMs: REQUEST_DEADLINE_MS, limitMs: SLOW_ANSWER_LIMIT_MS };

/** A health check must answer quickly even while ioredis holds commands back during a reconnect. */
const PING_TIMEOUT_MS = 1_000;

/**
 * Reconnect attempts come at most this far apart, so that a command waiting in the offline queue
 * learns of a failed attempt within about this long (it is failed on its second failed attempt).
 */
const MAX_RECONNECT_DELAY_MS = 500;

const reconnectDelay = (attempt: number): number => Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS);

function nodeOptions(role: ConnectionRole): RedisOptions {
  if (role === 'waiting') return { maxRetriesPerRequest: null, enableReadyCheck: true };
  return {
    // One retry rides over a dropped connection that comes straight back; a longer outage fails the command.
    maxRetriesPerRequest: 1,
    retryStrategy: reconnectDelay,
    enableOfflineQueue: role === 'commands',
    // No auto-pipelining: it saves socket writes, but each batch is an ioredis Pipeline whose
    // objects outlive young-generation collections; under tasks/get load that made 4-9 ms GC
    // pauses every ~125 ms, the p99 at half peak (docs/decisions/0008-redis-writes.md).
    enableAutoPipelining: false,
  };
}

/** Seed nodes of a cluster; credentials and TLS come from the first URL and apply to every node. */
function seeds(url: string): { nodes: { host: string; port: number }[]; options: RedisOptions } {
  const urls = url.split(',').map((each) => new URL(each.trim()));
  const nodes = urls.map((each) => ({ host: each.hostname, port: Number(each.port || 6379) }));
  const first = urls[0]!;
  const options: RedisOptions = {};
  if (first.username) options.username = decodeURIComponent(first.username);
  if (first.password) options.password = decodeURIComponent(first.password);
  if (first.protocol === 'rediss:') options.tls = {};
  return { nodes, options };
}

/** A new connection for `role`; errors are swallowed here because callers see them as rejections. */
export function connect(target: RedisTarget, role: ConnectionRole, name?: string): RedisConnection {
  const options = nodeOptions(role);
  if (name) options.connectionName = name;
  let client: RedisConnection;
  if (target.cluster) {
    const { nodes, options: auth } = seeds(target.url);
    const { enableOfflineQueue, ...perNode } = options;
    const clusterOptions: ClusterOptions = {
      redisOptions: { ...auth, ...perNode },
      enableOfflineQueue,
      clusterRetryStrategy: role === 'waiting' ? undefined : reconnectDelay,
    };
    client = new Cluster(nodes, clusterOptions);
  } else {
    client = new Redis(target.url, options);
  }
  // Without a listener ioredis would print every failed reconnect attempt.
  client.on('error', () => {});
  return client;
}

export function openRedis(options: RedisClientOptions): RedisClient {
  if (options.redis) return { redis: options.redis, owned: false };
  return { redis: connect({ url: options.url ?? DEFAULT_REDIS_URL, cluster: options.cluster }, 'commands'), owned: true };
}

/** A connection like `client` (same node or cluster) for SUBSCRIBE, which waits out an outage. */
export function subscriberFor(client: RedisConnection): RedisConnection {
  const subscriber =
    client instanceof Cluster
      ? client.duplicate([], {
          redisOptions: { ...client.options.redisOptions, maxRetriesPerRequest: null },
          clusterRetryStrategy: undefined,
        })
      : client.duplicate({ maxRetriesPerRequest: null });
  subscriber.on('error', () => {});
  return subscriber;
}

/**
 * Redis errors are bugs; anything else — including no answer in time (see AnswerDeadlines) — means
 * Redis could not be reached, which a client may retry.
 */
export async function callRedis<T>(
  what: string,
  connection: RedisConnection,
  command: () => Promise<T>,
  deadlines: AnswerDeadlines = DEADLINES,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  batchWrites(connection);
  const unanswered = new Promise<never>((_, reject) => {
    const check = (): void => {
      const waited = Date.now() - started;
      if (connection.status !== 'ready' || waited >= deadlines.limitMs) {
        reject(new Error(`no answer within ${waited} ms (connection ${connection.status})`));
        return;
      }
      timer = setTimeout(check, Math.min(deadlines.requestMs, deadlines.limitMs - waited));
    };
    timer = setTimeout(check, deadlines.requestMs);
  });
  try {
    return await Promise.race([command(), unanswered]);
  } catch (error) {
    if (error instanceof ReplyError) throw error;
    const unavailable = new UnavailableError(what);
    unavailable.cause = error;
    throw unavailable;
  } finally {
    clearTimeout(timer);
  }
}

/** Redis sockets corked until the next check phase of the event loop. */
const corked = new WeakSet<object>();

/**
 * Commands sent within one turn of the event loop leave in one socket write: under load a write
 * per command was a fifth of a replica's CPU (the kernel's loopback delivery runs in the writer's
 * syscall). ioredis's auto-pipelining batches too, but builds a Pipeline per batch whose objects
 * outlive young-generation collections (docs/decisions/0008-redis-writes.md). A Cluster spreads its
 * commands over one socket per node and is left alone.
 */
function batchWrites(connection: RedisConnection): void {
  if (!(connection instanceof Redis) || connection.status !== 'ready') return;
  const stream = (connection as unknown as { stream?: Socket }).stream;
  if (!stream || corked.has(stream)) return;
  corked.add(stream);
  stream.cork();
  setImmediate(() => {
    corked.delete(stream);
    stream.uncork();
  });
}

/** True when Redis answers PING within a second; false while it is down or reconnecting. */
export async function pingRedis(redis: RedisConnection): Promise<boolean> {
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
export async function disconnect(client: RedisConnection): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') return client.disconnect();
  await client.quit().catch(() => client.disconnect());
}
