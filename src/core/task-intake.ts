import type { RunningCall } from './running-call.js';
import type { NewTask, TaskRecord } from './task.js';

/** Where a new task enters: counted against its principal's open tasks, written, and its job made durable. */
export interface TaskIntake {
  /**
   * Resolves once every replica reads the task (`working`) and its job is durable: queued, or run
   * by this replica under its lease. Throws LimitExceededError when the principal is at its
   * open-task limit. A creation that fails gives its open-task slot back and leaves no task
   * `working` that nobody will run.
   */
  create(task: NewTask): Promise<TaskRecord>;
  /**
   * Makes a call that already runs in this replica a task (docs/decisions/0032): counted and
   * written like `create`, its job leased to this replica from the start, and the call goes on as
   * that job. When this throws, nothing was created and the call is the caller's to stop.
   */
  adopt(task: NewTask, call: RunningCall): Promise<TaskRecord>;
}
