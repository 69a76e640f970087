import { randomBytes } from 'node:crypto';
import { UnavailableError } from '../core/errors.js';
import { callRedis, connect, disconnect, type RedisConnection, type RedisTarget } from '../store/redis/connection.js';
import { loadScripts, type RunKeysScript } from '../store/redis/scripts.js';
import type { QueueKeys } from './queue-keys.js';
import { settledWithin } from './settled-within.js';
import type { Job, JobPlace, JobProcessor, LeaseOwner } from './work-queue.js';

/** The queue's scripts (src/execution/queue-keys.ts describes their keys). */
const SCRIPTS = new URL('./lua/', import.meta.url);

export interface QueueWorkerOptions {
  target: RedisTarget;
  keys: QueueKeys;
  /** The queue's request-path connection: renewals, reclaims and job ends, which must not wait behind a blocked read. */
  commands: RedisConnection;
  concurrency: number;
  lockMs: number;
}

/** How long one blocking wait lasts; it only bounds how long a silently dead connection goes unnoticed. */
const BLOCK_SECONDS = 5;
/** Leases and dead workers handed on per reclaim call; a bigger backlog takes further calls. */
const RECLAIM_BATCH = 200;
/** How long a drain waits for a take already sent, which Redis may have answered, before it cuts the connection. */
const TAKE_WAIT_MS = 2_000;
/** How long a drain waits for released jobs' processors to let go (a TaskRunner does at once). */
const RELEASE_WAIT_MS = 1_000;
const END_ATTEMPTS = 5;
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 2_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The worker side of RedisWorkQueue: takes jobs with a blocking wait (no polling), runs up to
 * `concurrency` at once under leases renewed in one call per interval, and hands on the jobs of
 * workers that died (lapsed leases) with one more lost run. Jobs this replica runs from their
 * task's creation (`reserve`) count against the same concurrency and live under the same leases;
 * a replica that only runs those (role `api`) never takes a queued job.
 */
export class QueueWorker {
  /** Names this worker in lease owners and heartbeats. */
  readonly token = randomBytes(12).toString('base64url');
  private readonly claimed: string;
  /** The blocking wait and the takes, which wait out an outage instead of failing; opened by `start`. */
  private waiting: RedisConnection | undefined;
  private take: RunKeysScript | undefined;
  private readonly scripts: Record<'renew' | 'reclaim' | 'done' | 'release' | 'hold', RunKeysScript>;
  /** Jobs whose lease this worker holds and renews. */
  private readonly leased = new Set<string>();
  /** Each job from its start until its end is recorded in Redis. */
  private readonly running = new Set<Promise<void>>();
  /** Per running job, what tells its processor to let go. */
  private readonly releases = new Map<string, AbortController>();
  /** Slots taken: jobs whose processor has not returned yet. */
  private busy = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private taking = false;
  private timed = false;
  private blocked = false;
  private slotFreed: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private renewing = false;
  private draining = false;
  private reclaiming = false;

  constructor(private readonly options: QueueWorkerOptions) {
    this.claimed = `${options.keys.claimed}${this.token}`;
    this.scripts = loadScripts(options.commands, SCRIPTS, ['renew', 'reclaim', 'done', 'release', 'hold']);
  }

  start(processor: JobProcessor): void {
    const waiting = connect(this.options.target, 'waiting');
    this.waiting = waiting;
    this.take = loadScripts(waiting, SCRIPTS, ['take']).take;
    this.taking = true;
    this.keepLeases();
    this.loop = this.takeJobs(processor);
  }

  /** What a one-script creation writes as the lease of a job this worker runs from creation. */
  leaseOwner(): LeaseOwner {
    return { token: this.token, lockMs: this.options.lockMs };
  }

  /** A place for a job run from its task's creation, if this worker runs fewer than `concurrency` jobs (or `force`). */
  reserve(force: boolean): JobPlace | undefined {
    if (this.draining || (!force && this.busy >= this.options.concurrency)) return undefined;
    this.busy++;
    let given = false;
    const giveBack = (): void => {
      if (given) return;
      given = true;
      this.freeSlot();
    };
    return {
      lease: async (taskId) => {
        const { keys, lockMs } = this.options;
        const held = await this.call(() => this.scripts.hold([keys.leases, keys.owners, keys.workers], [this.token, String(lockMs), taskId]));
        if (held !== 1) throw new UnavailableError('Work queue (the job is held by another worker)');
      },
      run: (taskId, body) => {
        given = true;
        this.keepLeases();
        this.runJob(taskId, body);
      },
      giveBack: (taskId) => {
        giveBack();
        // A lease written for a task that was never created: the job is nobody's.
        if (taskId !== undefined) void this.call(() => this.scripts.done([this.options.keys.leases, this.options.keys.owners, this.options.keys.lost], [this.token, taskId])).catch(() => undefined);
      },
    };
  }

  /** Takes no new job, waits up to `graceMs` for the running ones, then stops renewing what still runs. */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.taking) {
      this.taking = false;
      this.slotFreed?.();
      const waiting = this.waiting!;
      // A blocking wait has nothing in flight worth keeping; a take may have leased jobs, so it may end.
      if (this.blocked) waiting.disconnect();
      await Promise.race([this.loop, sleep(TAKE_WAIT_MS)]);
      waiting.disconnect();
      // A job the blocking wait moved just before it was cut goes back now, not when the heartbeat lapses.
      await this.call(() => this.scripts.release([this.claimed, this.options.keys.waiting], [])).catch(() => undefined);
    }
    await settledWithin(this.running, graceMs);
    // What still runs is let go: its processor returns without writing, and its lease is kept until
    // it lapses; another worker's reclaim then hands it on as lost. Moving it back to the queue at
    // once would hide that it ran.
    for (const release of this.releases.values()) release.abort();
    await settledWithin(this.running, RELEASE_WAIT_MS);
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    if (this.waiting) await disconnect(this.waiting);
  }

  /** Renewals and reclaims, from the first job this worker runs (taken or run from creation). */
  private keepLeases(): void {
    if (this.timed) return;
    this.timed = true;
    const { lockMs } = this.options;
    // Three renewals per lease: a worker that misses one (a long GC, a slow Redis) keeps its jobs.
    this.timers.push(setInterval(() => void this.renew(), Math.max(100, Math.floor(lockMs / 3))));
    this.timers.push(setInterval(() => void this.reclaim(), Math.max(500, Math.floor(lockMs / 2))));
    for (const timer of this.timers) timer.unref();
  }

  private freeSlot(): void {
    this.busy--;
    const freed = this.slotFreed;
    this.slotFreed = undefined;
    freed?.();
  }

  private async takeJobs(processor: JobProcessor): Promise<void> {
    const { keys, concurrency, lockMs } = this.options;
    const takeKeys = [keys.waiting, this.claimed, keys.leases, keys.owners, keys.lost, keys.workers];
    for (let failures = 0; this.taking; ) {
      if (this.busy >= concurrency) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      try {
        const reply = (await this.take!(takeKeys, [this.token, String(lockMs), String(concurrency - this.busy)])) as (string | number)[];
        failures = 0;
        const jobs: Job[] = [];
        for (let i = 0; i < reply.length; i += 2) jobs.push({ taskId: String(reply[i]), lostRuns: Number(reply[i + 1]) });
        // Leased while a drain began: the leases are ours, so the jobs run (or are released with the rest).
        for (const job of jobs) {
          this.busy++;
          this.runJob(job.taskId, (released) => processor(job, released));
        }
        if (jobs.length > 0 || !this.taking) continue;
        // Waits for a job without polling; the job lands in this worker's claimed list, leased by the next take.
        this.blocked = true;
        await this.waiting!.blmove(keys.waiting, this.claimed, 'RIGHT', 'LEFT', BLOCK_SECONDS);
      } catch {
        if (!this.taking) return;
        await sleep(Math.min(RETRY_BASE_MS * 2 ** failures++, RETRY_MAX_MS));
      } finally {
        this.blocked = false;
      }
    }
  }

  /** Runs a job whose slot is taken (`busy` counts it already) under this worker's lease. */
  private runJob(taskId: string, body: (released: AbortSignal) => Promise<void>): void {
    this.leased.add(taskId);
    const release = new AbortController();
    this.releases.set(taskId, release);
    // A drain waits for the job's end in Redis too, so that a finished job never comes back as lost;
    // a released job is not ended: it must come back.
    const run: Promise<void> = body(release.signal)
      .catch(() => undefined)
      .then(() => {
        this.freeSlot();
        return release.signal.aborted ? undefined : this.end(taskId);
      })
      .finally(() => {
        this.running.delete(run);
        this.releases.delete(taskId);
      });
    this.running.add(run);
  }

  /**
   * Ends the job in Redis (its outcome is on the task already), renewing its lease meanwhile. An
   * end given up lets the lease lapse; the job comes back and its TaskRunner finds the task terminal.
   */
  private async end(taskId: string): Promise<void> {
    const { keys } = this.options;
    for (let attempt = 0; this.leased.has(taskId); attempt++) {
      try {
        await this.call(() => this.scripts.done([keys.leases, keys.owners, keys.lost], [this.token, taskId]));
        break;
      } catch (err) {
        if (!(err instanceof UnavailableError) || attempt >= END_ATTEMPTS - 1) break;
        await sleep(RETRY_BASE_MS * 2 ** attempt);
      }
    }
    this.leased.delete(taskId);
  }

  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    const { keys, lockMs } = this.options;
    try {
      const gone = (await this.call(() => this.scripts.renew([keys.leases, keys.owners, keys.workers], [this.token, String(lockMs), ...this.leased]))) as string[];
      // Handed on to another worker while this one could not renew: that worker's lease is not ours to keep alive.
      for (const taskId of gone) this.leased.delete(taskId);
    } catch {
      // The next interval tries again; the lease outlasts two missed renewals.
    } finally {
      this.renewing = false;
    }
  }

  private async reclaim(): Promise<void> {
    if (this.reclaiming) return;
    this.reclaiming = true;
    const { keys } = this.options;
    try {
      for (;;) {
        const [leases, workers] = (await this.call(() =>
          this.scripts.reclaim([keys.waiting, keys.leases, keys.owners, keys.lost, keys.workers], [keys.claimed, String(RECLAIM_BATCH)]),
        )) as [number, number];
        if (leases < RECLAIM_BATCH && workers < RECLAIM_BATCH) break;
      }
    } catch {
      // Every worker reclaims on its own interval; one that missed a round catches up on the next.
    } finally {
      this.reclaiming = false;
    }
  }

  private call<T>(command: () => Promise<T>): Promise<T> {
    return callRedis('Work queue', this.options.commands, command);
  }
}
