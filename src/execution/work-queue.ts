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

export interface WorkQueue {
  /** Resolves once the job is durably queued. */
  enqueue(taskId: string): Promise<void>;
  /** Starts taking jobs; call once per replica. */
  start(processor: JobProcessor): void;
  /** Number of jobs waiting or running, for metrics and readiness. */
  depth(): Promise<number>;
  /**
   * Stops taking new jobs and waits (up to `graceMs`) for running ones; jobs still running then
   * are released (their processors are told to let go and are waited for, briefly; Redis: their
   * lease lapses and another replica's reclaim hands them on as lost).
   * Queueing still works, so that requests served during a shutdown can create tasks.
   */
  drain(graceMs: number): Promise<void>;
  /** Drains, then stops queueing too. */
  close(graceMs?: number): Promise<void>;
}
