import type { TaskRecord, TaskStatus } from './task.js';

/** Published after every change a store applies, on every replica. Carries no task content. */
export interface TaskChange {
  taskId: string;
  status: TaskStatus;
  lastUpdatedAt: number;
  /** The legacy session whose streams deliver this task's pushes, so a replica filters without a read. */
  sessionId?: string;
  /** A cancel was recorded on a task an upstream task backs: its mirror forwards it (the status stays). */
  cancelRequested?: true;
}

export type Unsubscribe = () => void;

/**
 * What the wires' fan-out (listen streams, legacy push streams) reads: the changes, then the
 * records they name. TaskService is the one implementation.
 */
export interface TaskFeed {
  subscribe(listener: (change: TaskChange) => void): Unsubscribe;
  /** Scoped: undefined for an unknown, foreign or expired id. */
  findTask(principal: string, taskId: string): Promise<TaskRecord | undefined>;
  /** Unscoped (a change names no principal): the caller shows the record only to its own principal. */
  loadTask(taskId: string): Promise<TaskRecord | undefined>;
}
