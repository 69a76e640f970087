import type { PolicySources } from '../core/policy.js';
import { configuredPolicy } from '../core/policy.js';
import type { TaskIntake } from '../core/task-intake.js';
import { Intake } from '../execution/intake.js';
import type { JobCreation } from '../execution/job-creation.js';
import { TaskRunner } from '../execution/task-runner.js';
import type { WorkQueue } from '../execution/work-queue.js';
import type { TaskStore } from '../store/task-store.js';
import type { UpstreamGateway } from '../upstream/gateway.js';

export interface JobsOptions {
  store: TaskStore;
  queue: WorkQueue;
  creation: JobCreation;
  gateway: UpstreamGateway;
  /** Read per job, so that a reload's `idempotent` flags apply to the next lost job. */
  policies: PolicySources;
  /** Roles `all` and `worker`: take queued jobs, and run the tasks this replica creates itself while it has room. */
  takesQueued: boolean;
}

/**
 * The jobs a replica runs: queued jobs it takes (roles `all` and `worker`), and in every role the
 * jobs it holds from their task's creation (docs/decisions/0032-durable-when-it-must-be.md): a
 * call that outlasted its window, and on a replica that takes jobs a task it created with room to
 * run it.
 */
export interface Jobs {
  /** Where the API role creates tasks. */
  intake: TaskIntake;
  /**
   * Takes no new job and gives the running ones up to `graceMs`; then lets go of the rest: their
   * runners return without writing, their leases lapse and another replica's reclaim hands them
   * on (a mirror resumes there, a plain call ends lost or re-runs). Resolves once no job of this
   * replica writes to the stores any more, so the upstream clients and then the stores may close.
   */
  stop(graceMs: number): Promise<void>;
}

export function startJobs(options: JobsOptions): Jobs {
  const { store, queue, creation, gateway, policies, takesQueued } = options;
  const runner = new TaskRunner({
    store,
    invoker: gateway,
    native: gateway,
    isIdempotent: (tool) => configuredPolicy(policies, tool)?.idempotent === true,
  });
  if (takesQueued) queue.start(runner.process);
  return {
    intake: new Intake({ creation, queue, runner, runsCreated: takesQueued }),
    stop: (graceMs) => queue.drain(graceMs),
  };
}
