/**
 * The work queue's keys (docs/operations.md, "Slot audit"). Every one carries the hash tag
 * `{<prefix>:q}`, so a Redis Cluster keeps the whole queue in one slot and every queue script
 * runs on one node.
 */
export interface QueueKeys {
  /** List of task ids waiting for a worker: pushed on the left, taken from the right (oldest first). */
  waiting: string;
  /** Sorted set of running jobs: member the task id, score the lease's end (ms, Redis clock). */
  leases: string;
  /** Hash task id → token of the worker that holds its lease. */
  owners: string;
  /** Hash task id → runs lost so far; only jobs that were lost at least once have a field. */
  lost: string;
  /** Sorted set of workers: member the worker's token, score the end of its heartbeat (ms, Redis clock). */
  workers: string;
  /** Prefix of each worker's claimed list `<claimed><token>`, where its blocking wait moves a job before leasing it. */
  claimed: string;
}

export function queueKeys(prefix: string): QueueKeys {
  const tag = `{${prefix}:q}`;
  return {
    waiting: `${tag}:waiting`,
    leases: `${tag}:leases`,
    owners: `${tag}:owners`,
    lost: `${tag}:lost`,
    workers: `${tag}:workers`,
    claimed: `${tag}:claimed:`,
  };
}
