import { newTaskId } from '../../src/core/ids.js';
import type { NewTask } from '../../src/core/task.js';

/** A task as TaskService would hand it to a store: alice's `slow_compute`, a minute to live. */
export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId: newTaskId(),
    principal: 'alice',
    origin: 'sep2663',
    tool: 'slow_compute',
    arguments: {},
    createdAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
    clientCapabilities: {},
    ...overrides,
  };
}
