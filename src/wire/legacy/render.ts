import type { JsonRpcErrorObject, TaskRecord } from '../../core/task.js';
import { FIELD_TABLE } from '../../mapping/fields.js';
import { CANCELLED_AS_ERROR, STATUS_TABLE } from '../../mapping/statuses.js';

/** A CallToolResult with `isError: true` (2025-11-25 calls that task `failed`). */
function isToolError(task: TaskRecord): boolean {
  return task.status === 'completed' && task.result?.isError === true;
}

function firstText(result: Record<string, unknown> | undefined): string | undefined {
  const content = result?.content;
  if (!Array.isArray(content)) return undefined;
  const text = content.find((c): c is { type: 'text'; text: string } => (c as { type?: unknown })?.type === 'text');
  return text?.text;
}

/** The flat 2025-11-25 `Task` (MCP 2025-11-25 schema). */
export function renderMcpTask(task: TaskRecord): Record<string, unknown> {
  const row = STATUS_TABLE[task.status];
  const toolError = isToolError(task);
  const out: Record<string, unknown> = {
    taskId: task.taskId,
    status: toolError ? (row.mcp20251125WhenToolError ?? row.mcp20251125) : row.mcp20251125,
  };
  const statusMessage = toolError ? (firstText(task.result) ?? task.statusMessage) : task.statusMessage;
  if (statusMessage !== undefined) out.statusMessage = statusMessage;
  out.createdAt = new Date(task.createdAt).toISOString();
  out.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  out[FIELD_TABLE.ttlMs.mcp20251125] = task.ttlMs;
  out[FIELD_TABLE.pollIntervalMs.mcp20251125] = task.pollIntervalMs;
  return out;
}

/** The tasks/create dialect's flat task, with `result` when done and `error` when error. */
export function renderDialectTask(task: TaskRecord): Record<string, unknown> {
  const row = STATUS_TABLE[task.status].tasksCreate;
  const status = task.startedAt === undefined ? row.notStarted : row.started;
  const out: Record<string, unknown> = { taskId: task.taskId, status };
  if (task.statusMessage !== undefined) out.statusMessage = task.statusMessage;
  out.createdAt = new Date(task.createdAt).toISOString();
  out.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  out[FIELD_TABLE.ttlMs.tasksCreate] = task.ttlMs;
  out[FIELD_TABLE.pollIntervalMs.tasksCreate] = task.pollIntervalMs;
  if (status === 'done') out.result = task.result;
  if (status === 'error') out.error = dialectError(task);
  return out;
}

function dialectError(task: TaskRecord): JsonRpcErrorObject {
  if (task.status === 'cancelled') return { ...CANCELLED_AS_ERROR, data: { ...CANCELLED_AS_ERROR.data } };
  return task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' };
}

/** `tasks/result` payload: the original result with the related-task `_meta` merged in. */
export function renderTaskResult(task: TaskRecord): { result: Record<string, unknown> } | { error: JsonRpcErrorObject } {
  const related = { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } };
  if (task.status === 'completed') {
    const result = task.result ?? { content: [] };
    return { result: { ...result, _meta: { ...((result._meta as Record<string, unknown>) ?? {}), ...related } } };
  }
  const error = task.status === 'cancelled' ? { ...CANCELLED_AS_ERROR, data: { ...CANCELLED_AS_ERROR.data } } : (task.error ?? { code: -32603, message: 'Task failed' });
  const data = error.data;
  if (data === undefined || (typeof data === 'object' && data !== null && !Array.isArray(data))) {
    const base = (data as Record<string, unknown> | undefined) ?? {};
    return { error: { ...error, data: { ...base, _meta: { ...((base._meta as Record<string, unknown>) ?? {}), ...related } } } };
  }
  return { error };
}
