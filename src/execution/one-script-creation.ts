import type { PrincipalLimits } from '../core/limits.js';
import type { NewTask, TaskRecord } from '../core/task.js';
import type { QueuedCreation, RedisTaskStore } from '../store/redis/redis-store.js';
import type { JobCreation } from './job-creation.js';
import type { QueueKeys } from './queue-keys.js';
import type { JobPlace, LeaseOwner } from './work-queue.js';

/**
 * Creation on one Redis (not a Cluster): the open-task count, the task hash and the job (queued,
 * or leased to this replica) in one script, one round trip, all or nothing, so no task is left
 * `working` without its job.
 */
export class OneScriptCreation implements JobCreation {
  constructor(
    private readonly store: RedisTaskStore,
    private readonly keys: QueueKeys,
    /** This replica's name on the leases of the jobs it runs from creation (RedisWorkQueue.leaseOwner). */
    private readonly owner: () => LeaseOwner,
    private readonly limits: PrincipalLimits,
  ) {}

  queued(task: NewTask): Promise<TaskRecord> {
    return this.settle(task, this.store.createQueued(task, this.keys.waiting, this.limits.maxOpenTasks));
  }

  async held(task: NewTask, place: JobPlace): Promise<TaskRecord> {
    const { leases, owners, workers } = this.keys;
    try {
      return await this.settle(task, this.store.createHeld(task, { leases, owners, workers, ...this.owner() }, this.limits.maxOpenTasks));
    } catch (err) {
      // A script that ran all the same leased the job: giving the place back ends that lease too.
      place.giveBack(task.taskId);
      throw err;
    }
  }

  private settle(task: NewTask, creation: Promise<QueuedCreation>): Promise<TaskRecord> {
    return creation.then(
      (outcome) => {
        if (!outcome.created) throw this.limits.refuseTask(outcome.open);
        return outcome.task;
      },
      (err: unknown) => {
        // Mostly no answer in time; a script that ran all the same counts its task until the task ends.
        this.limits.forgetQuietly(task.principal, task.taskId);
        throw err;
      },
    );
  }
}
