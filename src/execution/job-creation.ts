import type { NewTask, TaskRecord } from '../core/task.js';
import type { JobPlace } from './work-queue.js';

/** How one backend writes a task and its job (counted against the principal's open tasks first). */
export interface JobCreation {
  /** The task, and its job queued for any worker. */
  queued(task: NewTask): Promise<TaskRecord>;
  /**
   * The task, and its job leased to this replica in `place` (which the caller then runs). When
   * this throws nothing was created: the open-task slot, and a lease written, are given back.
   */
  held(task: NewTask, place: JobPlace): Promise<TaskRecord>;
}
