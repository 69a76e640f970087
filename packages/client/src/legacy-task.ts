import type { TaskSnapshot, TaskStatus } from './types.js';

/** A task in the 2025-11-25 shape (the official SDK's `Task`): what old code passes around. */
export type LegacyTask = {
  taskId: string;
  status: TaskStatus;
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval?: number;
  statusMessage?: string;
};

/**
 * A snapshot in the 2025-11-25 shape, for code that hands the result of the old `getTask` on
 * (to an SDK `Task` field, a return type, an event): `ttlMs` → `ttl`, `pollIntervalMs` →
 * `pollInterval`; the inlined `result`, `error` and `inputRequests` are left out, as the old
 * answer had none of them.
 */
export function toLegacyTask(snapshot: TaskSnapshot): LegacyTask {
  const task: LegacyTask = {
    taskId: snapshot.taskId,
    status: snapshot.status,
    ttl: snapshot.ttlMs,
    createdAt: snapshot.createdAt,
    lastUpdatedAt: snapshot.lastUpdatedAt,
  };
  if (snapshot.pollIntervalMs !== undefined) task.pollInterval = snapshot.pollIntervalMs;
  if (snapshot.statusMessage !== undefined) task.statusMessage = snapshot.statusMessage;
  return task;
}
