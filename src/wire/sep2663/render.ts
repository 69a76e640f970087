import type { TaskRecord } from '../../core/task.js';
import { FIELD_TABLE } from '../../mapping/fields.js';
import { STATUS_TABLE } from '../../mapping/statuses.js';

const TTL = FIELD_TABLE.ttlMs.sep2663;
const POLL = FIELD_TABLE.pollIntervalMs.sep2663;

/** The `Task` fields every SEP-2663 task shape starts with. */
export function renderTask(task: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    taskId: task.taskId,
    status: STATUS_TABLE[task.status].sep2663,
  };
  if (task.statusMessage !== undefined) out.statusMessage = task.statusMessage;
  out.createdAt = new Date(task.createdAt).toISOString();
  out.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  out[TTL] = task.ttlMs;
  out[POLL] = task.pollIntervalMs;
  return out;
}

/** `DetailedTask`: the status variant with its required extra field (§9). */
export function renderDetailedTask(task: TaskRecord): Record<string, unknown> {
  const out = renderTask(task);
  switch (task.status) {
    case 'input_required':
      out.inputRequests = task.inputRequests;
      break;
    case 'completed':
      // We include resultType on the inlined result: strict 2026 clients reject a CallToolResult without it.
      out.result = { resultType: 'complete', ...withoutRelatedTask(task.result ?? {}) };
      break;
    case 'failed':
      out.error = task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' };
      break;
    default:
      break;
  }
  return out;
}

/** Flat `CreateTaskResult`, seeded `working` (our rule), with none of the detailed fields. */
export function renderCreateTaskResult(task: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...renderTask({ ...task, status: 'working' }) };
}

function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  if (!meta || !('io.modelcontextprotocol/related-task' in meta)) return result;
  const { 'io.modelcontextprotocol/related-task': _dropped, ...rest } = meta;
  const copy = { ...result };
  if (Object.keys(rest).length > 0) copy._meta = rest;
  else delete copy._meta;
  return copy;
}
