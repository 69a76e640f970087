import { InternalError } from './errors.js';
import type { PrincipalLimits } from './limits.js';
import type { Clock, TaskQueue } from './ports.js';
import type { NewTask, TaskRecord } from './task.js';
import type { TaskStore } from '../store/task-store.js';

/** Where a new task enters: counted against its principal's open tasks, written, and its job queued. */
export interface TaskIntake {
  /**
   * Resolves once every replica reads the task (`working`) and its job is durably queued. Throws
   * LimitExceededError when the principal is at its open-task limit. A creation that fails gives
   * its open-task slot back and leaves no task `working` that nobody will run.
   */
  create(task: NewTask): Promise<TaskRecord>;
}

/** One store or queue call per step: what every backend can do (the embedded store, a Redis Cluster). */
export class StepwiseIntake implements TaskIntake {
  constructor(
    private readonly store: TaskStore,
    private readonly queue: TaskQueue,
    private readonly limits: PrincipalLimits,
    private readonly clock: Clock,
  ) {}

  async create(task: NewTask): Promise<TaskRecord> {
    const { store, limits } = this;
    await limits.admitTask(task.principal, task.taskId, task.createdAt + task.ttlMs);
    const record = await store.create(task).catch((err: unknown) => {
      limits.forgetQuietly(task.principal, task.taskId);
      throw err;
    });
    try {
      await this.queue.enqueue(record.taskId);
    } catch (err) {
      // A task nobody will run must not sit in `working` until its TTL; its finish gives the slot back.
      const error = new InternalError(`Could not queue the task: ${err instanceof Error ? err.message : String(err)}`);
      const outcome = { status: 'failed' as const, error: error.toJsonRpc(), statusMessage: error.message };
      const finished = await store.finish(record.taskId, outcome, this.clock.now()).catch(() => false);
      if (!finished) limits.forgetQuietly(task.principal, task.taskId);
      throw error;
    }
    return record;
  }
}
