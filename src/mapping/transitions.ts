import type { TaskStatus } from '../core/task.js';

/**
 * Legal status transitions, as data. The stores enforce exactly this table (the Redis Lua
 * scripts receive the allowed sources from it), so an illegal move is refused in one place.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ['input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses from which `to` may be reached. */
export function sourcesOf(to: TaskStatus): TaskStatus[] {
  return (Object.keys(TRANSITIONS) as TaskStatus[]).filter((from) => canTransition(from, to));
}
