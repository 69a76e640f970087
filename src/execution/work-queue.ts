/**
 * Where task executions wait for a worker. Redis deployments use RedisWorkQueue (leases renewed
 * while a job runs, a dead worker's jobs handed on across replicas); the embedded store runs
 * jobs in this process.
 */
export interface Job {
  taskId: string;
  /** How many workers took this job before and were lost before finishing it (0: first delivery). */
  lostRuns: number;
}

/**
 * Runs one job. `released` is aborted when this replica lets go of the job (a stop whose grace
 * ended while it ran): the processor then returns at once and writes nothing more, since the
 * job is about to be another replica's.
 */
export type JobProcessor = (job: Job, released: AbortSignal) => Promise<void>;

/**
 * A place for a job that this replica runs from its task's creation, never queued
 * (docs/decisions/0032-durable-when-it-must-be.md): it counts against the replica's concurrency
 * from the moment it is reserved, and its lease is this replica's, so that a replica lost while
 * the job runs hands it on as lost, exactly like a taken job.
 */
export interface JobPlace {
  /** Writes this replica's lease on the job (a creation in steps; a one-script creation writes it itself). */
  lease(taskId: string): Promise<void>;
  /** Runs `body` as the job: its lease renewed, let go in a drain like a taken job, ended when `body` settles. */
  run(taskId: string, body: (released: AbortSignal) => Promise<void>): void;
  /** The task was not created: the place, and a lease written for it, are given back. */
  giveBack(taskId?: string): void;
}

/** Who a one-script creation names as the holder of a job's lease (RedisWorkQueue). */
export interface LeaseOwner {
  token: string;
  lockMs: number;
}

export interface WorkQueue {
  /** Resolves once the job is durably queued. */
  enqueue(taskId: string): Promise<void>;
  /** Starts taking jobs; call once per replica. */
  start(processor: JobProcessor): void;
  /**
   * A place for a job this replica runs itself, or undefined when it runs as many jobs as its
   * concurrency allows; `force` takes one all the same (a call that already runs here).
   */
  reserve(force: boolean): JobPlace | undefined;
  /** Number of jobs waiting or running, for metrics and readiness. */
  depth(): Promise<number>;
  /**
   * Stops taking new jobs and waits (up to `graceMs`) for running ones, taken or run from
   * creation; jobs still running then are released (their processors are told to let go and are
   * waited for, briefly; Redis: their lease lapses and another replica's reclaim hands them on as
   * lost). Queueing still works, so that requests served during a shutdown can create tasks.
   */
  drain(graceMs: number): Promise<void>;
  /** Drains, then stops queueing too. */
  close(graceMs?: number): Promise<void>;
}
