import type { NewTask, TaskRecord } from '../core/task.js';

/**
 * The record a new task starts as. Optional fields left `undefined` are dropped, so that every
 * store hands back the same shape (Redis cannot hold an `undefined` field).
 *
 * One literal rather than a copy key by key: every creation passes here, and an object grown one
 * computed key at a time turns into a slow dictionary that costs an allocation of its own.
 */
export function initialRecord(task: NewTask): TaskRecord {
  const record: TaskRecord = {
    taskId: task.taskId,
    principal: task.principal,
    origin: task.origin,
    tool: task.tool,
    arguments: task.arguments,
    status: 'working',
    createdAt: task.createdAt,
    lastUpdatedAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    inputRequests: {},
    inputResponses: {},
    cancelRequested: false,
    clientCapabilities: task.clientCapabilities,
  };
  if (task.sessionId !== undefined) record.sessionId = task.sessionId;
  if (task.statusMessage !== undefined) record.statusMessage = task.statusMessage;
  if (task.startedAt !== undefined) record.startedAt = task.startedAt;
  if (task.result !== undefined) record.result = task.result;
  if (task.error !== undefined) record.error = task.error;
  if (task.clientInfo !== undefined) record.clientInfo = task.clientInfo;
  return record;
}
