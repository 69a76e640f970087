import { Queue, Worker } from 'bullmq';
import { connect, disconnect, type ConnectionRole, type RedisConnection } from '../store/redis/connection.js';
import type { JobProcessor, WorkQueue } from './work-queue.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** `redisUrl` lists seed nodes of a Redis Cluster. */
  redisCluster?: boolean;
  /** Key prefix; wrapped in a hash tag so a Redis Cluster keeps the queue in one slot. */
  prefix: string;
  concurrency: number;
  /** How long a worker holds a job without renewing; a dead replica's jobs are stalled after it. */
  lockDurationMs?: number;
}

const QUEUE_NAME = 'tasks';
/** Far above what the TaskRunner lets happen (see there); only a bound against a runaway. */
const MAX_STALLED = 100;

/**
 * BullMQ does the cross-replica parts we need: a job runs on exactly one worker, its lock is
 * renewed while it runs, and a job whose worker died is detected as stalled and handed to
 * another worker with the count of lost runs, which then decides between failing the task
 * and re-running it (see TaskRunner).
 */
export class BullMqQueue implements WorkQueue {
  private readonly queue: Queue;
  private worker: Worker | undefined;
  /** Jobs this replica is running, so that a drain can wait for them with its own bound. */
  private readonly running = new Set<Promise<void>>();
  private readonly connections: RedisConnection[] = [];

  constructor(private readonly options: BullMqQueueOptions) {
    // Enqueueing is on the request path: it fails fast while Redis is down, like the stores.
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection('commands'), prefix: this.prefix() });
    // Without a listener BullMQ prints every failed reconnect as a stack trace; enqueue() still rejects.
    this.queue.on('error', () => undefined);
  }

  async enqueue(taskId: string): Promise<void> {
    await this.queue.add('run', { taskId }, { jobId: taskId, removeOnComplete: true, removeOnFail: { age: 3600 } });
  }

  start(processor: JobProcessor): void {
    if (this.worker) throw new Error('queue already started');
    const lockDuration = this.options.lockDurationMs ?? 30_000;
    this.worker = new Worker(
      QUEUE_NAME,
      (job) => this.track(processor({ taskId: (job.data as { taskId: string }).taskId, lostRuns: job.stalledCounter ?? 0 })),
      {
        // BullMQ requires its worker connections to retry forever; it takes jobs again once Redis is back.
        connection: this.connection('waiting'),
        prefix: this.prefix(),
        concurrency: this.options.concurrency,
        lockDuration,
        stalledInterval: Math.max(1_000, Math.floor(lockDuration / 2)),
        // The TaskRunner settles a lost job itself (failed, or one re-run): BullMQ's own limit would
        // fail the job without running the processor, and leave the task `working` until its TTL.
        maxStalledCount: MAX_STALLED,
      },
    );
    // Errors are per job and already recorded on the task; the worker must not crash the process.
    this.worker.on('error', () => undefined);
  }

  async depth(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  async drain(graceMs: number): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // A graceful Worker.close() would wait for every job without bound, and a forced one asked
    // later returns that same wait: pause instead, and wait for the running jobs ourselves.
    await worker.pause(true).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timer = setTimeout(resolve, graceMs).unref()))]);
    clearTimeout(timer);
    // A job still running keeps its lock until it lapses (lockDurationMs); moving it back to the
    // queue would hide that it ran, so the stall check hands it on as redelivered (TaskRunner).
    await worker.close(true).catch(() => undefined);
  }

  async close(graceMs = 10_000): Promise<void> {
    await this.drain(graceMs);
    await this.queue.close().catch(() => undefined);
    await Promise.allSettled(this.connections.map((c) => disconnect(c)));
  }

  private track(run: Promise<void>): Promise<void> {
    this.running.add(run);
    void run.catch(() => undefined).finally(() => this.running.delete(run));
    return run;
  }

  private prefix(): string {
    return `{${this.options.prefix}:q}`;
  }

  private connection(role: ConnectionRole): RedisConnection {
    const connection = connect({ url: this.options.redisUrl, cluster: this.options.redisCluster }, role);
    this.connections.push(connection);
    return connection;
  }
}
