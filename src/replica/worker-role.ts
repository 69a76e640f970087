import { configuredPolicy, type PolicySources } from '../core/policy.js';
import { TaskRunner } from '../execution/task-runner.js';
import type { WorkQueue } from '../execution/work-queue.js';
import type { TaskStore } from '../store/task-store.js';
import type { UpstreamGateway } from '../upstream/gateway.js';

export interface WorkerRoleOptions {
  store: TaskStore;
  queue: WorkQueue;
  gateway: UpstreamGateway;
  /** Read per job, so that a reload's `idempotent` flags apply to the next lost job. */
  policies: PolicySources;
}

/** The worker role: takes jobs from the shared queue and runs each task against the upstream (roles `all` and `worker`). */
export interface WorkerRole {
  /**
   * Takes no new job and gives the running ones up to `graceMs`; then lets go of the rest: their
   * runners return without writing, their leases lapse and another replica's reclaim hands them
   * on (a mirror resumes there, a plain call ends lost or re-runs). Resolves once no job of this
   * replica writes to the stores any more, so the upstream clients and then the stores may close.
   */
  stop(graceMs: number): Promise<void>;
}

export function startWorkerRole(options: WorkerRoleOptions): WorkerRole {
  const { store, queue, gateway, policies } = options;
  const runner = new TaskRunner({
    store,
    invoker: gateway,
    native: gateway,
    isIdempotent: (tool) => configuredPolicy(policies, tool)?.idempotent === true,
  });
  queue.start(runner.process);
  return { stop: (graceMs) => queue.drain(graceMs) };
}
