import { callRedis, connect, disconnect, type RedisConnection } from '../store/redis/connection.js';
import { checkPrefix } from '../store/redis/keys.js';
import { queueKeys, type QueueKeys } from './queue-keys.js';
import { QueueWorker } from './queue-worker.js';
import type { JobPlace, JobProcessor, LeaseOwner, WorkQueue } from './work-queue.js';

export interface RedisWorkQueueOptions {
  redisUrl: string;
  /** `redisUrl` lists seed nodes of a Redis Cluster. */
  redisCluster?: boolean;
  /** Key prefix; wrapped in a hash tag so a Redis Cluster keeps the queue in one slot. */
  prefix: string;
  concurrency: number;
  /** How long a worker holds a job without renewing; a dead replica's jobs are handed on after it. */
  lockDurationMs?: number;
}

/**
 * The work queue on Redis (docs/decisions/0007-own-work-queue.md). A job is its task id and
 * nothing else (the task hash holds the rest): queueing it is one LPUSH. Workers lease jobs,
 * renew the leases while the jobs run and hand on the jobs of workers that died (QueueWorker).
 */
export class RedisWorkQueue implements WorkQueue {
  readonly keys: QueueKeys;
  /** Enqueueing is on the request path: it fails fast while Redis is down, like the stores. */
  private readonly redis: RedisConnection;
  /** Leases, renewals and reclaims; it takes queued jobs only once started (roles `all` and `worker`). */
  private readonly worker: QueueWorker;
  private started = false;
  private closed = false;

  constructor(options: RedisWorkQueueOptions) {
    this.keys = queueKeys(checkPrefix(options.prefix));
    const target = { url: options.redisUrl, cluster: options.redisCluster };
    this.redis = connect(target, 'commands');
    this.worker = new QueueWorker({
      target,
      keys: this.keys,
      commands: this.redis,
      concurrency: options.concurrency,
      lockMs: options.lockDurationMs ?? 30_000,
    });
  }

  async enqueue(taskId: string): Promise<void> {
    if (this.closed) throw new Error('the work queue is closed');
    await callRedis('Work queue', this.redis, () => this.redis.lpush(this.keys.waiting, taskId));
  }

  start(processor: JobProcessor): void {
    if (this.started) throw new Error('queue already started');
    this.started = true;
    this.worker.start(processor);
  }

  reserve(force: boolean): JobPlace | undefined {
    return this.worker.reserve(force);
  }

  /** Who a one-script creation names as the holder of the lease of a job this replica runs from creation. */
  leaseOwner(): LeaseOwner {
    return this.worker.leaseOwner();
  }

  async depth(): Promise<number> {
    const [waiting, running] = await callRedis('Work queue', this.redis, () =>
      Promise.all([this.redis.llen(this.keys.waiting), this.redis.zcard(this.keys.leases)]),
    );
    return waiting + running;
  }

  async drain(graceMs: number): Promise<void> {
    await this.worker.drain(graceMs);
  }

  async close(graceMs = 10_000): Promise<void> {
    await this.drain(graceMs);
    this.closed = true;
    await disconnect(this.redis);
  }
}
