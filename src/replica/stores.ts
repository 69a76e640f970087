import { redactUrl } from '../config/redact.js';
import type { ShimConfig } from '../config/schema.js';
import { PrincipalLimits } from '../core/limits.js';
import { systemClock } from '../core/ports.js';
import { InProcessQueue } from '../execution/in-process-queue.js';
import type { JobCreation } from '../execution/job-creation.js';
import { OneScriptCreation } from '../execution/one-script-creation.js';
import { RedisWorkQueue } from '../execution/redis-queue.js';
import { StepwiseCreation } from '../execution/stepwise-creation.js';
import type { WorkQueue } from '../execution/work-queue.js';
import { EmbeddedSessionStore } from '../session/embedded-session-store.js';
import { RedisSessionStore } from '../session/redis-session-store.js';
import type { SessionStore } from '../session/session-store.js';
import { EmbeddedTaskStore } from '../store/embedded/embedded-store.js';
import { RedisTaskStore } from '../store/redis/redis-store.js';
import type { TaskStore } from '../store/task-store.js';
import { withTimeout } from './timeout.js';

/** Everything a replica shares with the others: tasks, sessions, the work queue, and the principals' counts over them. */
export interface Stores {
  store: TaskStore;
  sessions: SessionStore;
  queue: WorkQueue;
  limits: PrincipalLimits;
  /** How a task and its job are written: one script on one Redis, separate steps elsewhere. */
  creation: JobCreation;
  /**
   * Resolves once the store's change subscription is live. Changes published before it would be
   * lost to the first watchers; a store that cannot subscribe within STORE_READY_MS is unreachable:
   * the stores are closed and the error says what to check.
   */
  ready(): Promise<void>;
  /** Closes the queue's connections, the sessions and the tasks; last in a shutdown, since every other part writes to them. */
  close(): Promise<void>;
}

const STORE_READY_MS = 10_000;

/** What an operator needs when Redis does not answer at start: where, how long we waited, what to check. */
function storeUnreachable(config: ShimConfig): string {
  const where = config.redisUrl ? `Redis at ${redactUrl(config.redisUrl)}` : 'the task store';
  return (
    `${where} did not answer within ${STORE_READY_MS / 1000} s. Check that Redis runs and listens there, that this host can reach ` +
    'it (address, port, firewall), the password in the URL, rediss:// if it needs TLS' +
    (config.redisCluster ? ', and that the seeds are nodes of a Redis Cluster' : '')
  );
}

/**
 * Redis when a URL is configured, else the embedded stores (one process). `sharedSessions` is
 * false on a replica that serves no sessions (role worker): its session store is the passive
 * embedded one, which opens no connection.
 */
export function openStores(config: ShimConfig, { sharedSessions }: { sharedSessions: boolean }): Stores {
  const redis = config.redisUrl ? { url: config.redisUrl, cluster: config.redisCluster, prefix: config.redisPrefix } : undefined;
  const redisStore = redis ? new RedisTaskStore(redis) : undefined;
  const store: TaskStore = redisStore ?? new EmbeddedTaskStore();
  const sessions: SessionStore = redis && sharedSessions ? new RedisSessionStore(redis) : new EmbeddedSessionStore();
  const redisQueue = redis
    ? new RedisWorkQueue({
        redisUrl: redis.url,
        redisCluster: redis.cluster,
        prefix: redis.prefix,
        concurrency: config.workerConcurrency,
        lockDurationMs: config.jobLockMs,
      })
    : undefined;
  const queue: WorkQueue = redisQueue ?? new InProcessQueue(config.workerConcurrency);
  const limits = new PrincipalLimits(
    store,
    {
      maxOpenTasks: config.maxOpenTasksPerPrincipal,
      maxOpenStreams: config.maxOpenStreamsPerPrincipal,
      maxSessions: config.maxSessionsPerPrincipal,
      // Renewed on every keep-alive: a stream of a replica that died stops counting after three missed ones.
      streamLeaseMs: 3 * config.listenKeepAliveMs,
    },
    systemClock,
  );
  // One Redis creates a task in one script; a Cluster keeps the task and the queue in different slots.
  const creation: JobCreation =
    redisStore && redisQueue && !config.redisCluster
      ? new OneScriptCreation(redisStore, redisQueue.keys, () => redisQueue.leaseOwner(), limits)
      : new StepwiseCreation(store, queue, limits, systemClock);
  const close = async (): Promise<void> => {
    // Workers were stopped before: this ends the queue's own connections (and no job is running).
    await queue.close(0);
    await sessions.close();
    await store.close();
  };
  return {
    store,
    sessions,
    queue,
    limits,
    creation,
    ready: () =>
      withTimeout(store.subscriptionReady(), STORE_READY_MS, storeUnreachable(config)).catch(async (err: unknown) => {
        await close().catch(() => undefined);
        throw err;
      }),
    close,
  };
}
