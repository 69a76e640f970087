import { InternalError } from '../core/errors.js';
import type { PrincipalLimits } from '../core/limits.js';
import type { Clock } from '../core/ports.js';
import type { NewTask, TaskRecord } from '../core/task.js';
import type { TaskStore } from '../store/task-store.js';
import type { JobCreation } from './job-creation.js';
import type { JobPlace, WorkQueue } from './work-queue.js';

/** One store or queue call per step: what every backend can do (the embedded store, a Redis Cluster). */
export class StepwiseCreation implements JobCreation {
  constructor(
    private readonly store: TaskStore,
    private readonly queue: Pick<WorkQueue, 'enqueue'>,
    private readonly limits: PrincipalLimits,
    private readonly clock: Clock,
  ) {}

  async queued(task: NewTask): Promise<TaskRecord> {
    const record = await this.write(task);
    try {
      await this.queue.enqueue(record.taskId);
    } catch (err) {
      // A task nobody will run must not sit in `working` until its TTL; its finish gives the slot back.
      const error = new InternalError(`Could not queue the task: ${err instanceof Error ? err.message : String(err)}`);
      const outcome = { status: 'failed' as const, error: error.toJsonRpc(), statusMessage: error.message };
      const finished = await this.store.finish(record.taskId, outcome, this.clock.now()).catch(() => false);
      if (!finished) this.limits.forgetQuietly(task.principal, task.taskId);
      throw error;
    }
    return record;
  }

  /**
   * The lease before the record: a replica lost between the two leaves a lease that lapses onto a
   * job whose task does not exist, which the next worker ends at once; the other order could
   * leave a task `working` that no job runs.
   */
  async held(task: NewTask, place: JobPlace): Promise<TaskRecord> {
    try {
      await place.lease(task.taskId);
    } catch (err) {
      place.giveBack();
      throw err;
    }
    try {
      return await this.write(task);
    } catch (err) {
      place.giveBack(task.taskId);
      throw err;
    }
  }

  private async write(task: NewTask): Promise<TaskRecord> {
    const { store, limits } = this;
    await limits.admitTask(task.principal, task.taskId, task.createdAt + task.ttlMs);
    return store.create(task).catch((err: unknown) => {
      limits.forgetQuietly(task.principal, task.taskId);
      throw err;
    });
  }
}
