import type { PrincipalLimits } from '../core/limits.js';
import type { TaskIntake } from '../core/task-intake.js';
import type { NewTask, TaskRecord } from '../core/task.js';
import type { RedisTaskStore } from '../store/redis/redis-store.js';

/**
 * Creation on one Redis (not a Cluster): the open-task count, the task hash and the job in one
 * script, one round trip, all or nothing, so no task is left `working` without its job.
 */
export class OneScriptIntake implements TaskIntake {
  constructor(
    private readonly store: RedisTaskStore,
    /** The work queue's waiting list (RedisWorkQueue.keys.waiting). */
    private readonly queue: string,
    private readonly limits: PrincipalLimits,
  ) {}

  create(task: NewTask): Promise<TaskRecord> {
    return this.store.createQueued(task, this.queue, this.limits.maxOpenTasks).then(
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
