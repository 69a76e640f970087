import type { PolledTask } from '../../core/task.js';
import { FIELD_TABLE } from '../../mapping/fields.js';
import { STATUS_TABLE } from '../../mapping/statuses.js';
import { isoTime } from './iso-time.js';

const TTL = FIELD_TABLE.ttlMs.sep2663;
const POLL = FIELD_TABLE.pollIntervalMs.sep2663;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const TTL_KEY = JSON.stringify(TTL);
const POLL_KEY = JSON.stringify(POLL);
const WORKING = JSON.stringify(STATUS_TABLE.working.sep2663);

/** The `Task` fields every SEP-2663 task shape starts with. */
function renderTask(task: PolledTask): Record<string, unknown> {
  const out: Record<string, unknown> = {
    taskId: task.taskId,
    status: STATUS_TABLE[task.status].sep2663,
  };
  if (task.statusMessage !== undefined) out.statusMessage = task.statusMessage;
  out.createdAt = isoTime(task.createdAt);
  out.lastUpdatedAt = isoTime(task.lastUpdatedAt);
  out[TTL] = task.ttlMs;
  out[POLL] = task.pollIntervalMs;
  return out;
}

/** `DetailedTask`: the status variant with its required extra field (SEP-2663 schema, `DetailedTask`). */
export function renderDetailedTask(task: PolledTask): Record<string, unknown> {
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

/**
 * The members (no braces, no `resultType`) of a flat `CreateTaskResult` as JSON text: `working`
 * (our rule) whatever the record says by now, with none of the detailed fields. The same bytes as
 * `JSON.stringify(renderTask({ ...task, status: 'working' }))` without the copy.
 */
export function createTaskMembers(task: PolledTask): string {
  let out = `"taskId":${JSON.stringify(task.taskId)},"status":${WORKING}`;
  if (task.statusMessage !== undefined) out += `,"statusMessage":${JSON.stringify(task.statusMessage)}`;
  out += `,"createdAt":"${isoTime(task.createdAt)}","lastUpdatedAt":"${isoTime(task.lastUpdatedAt)}"`;
  return out + numberMember(TTL_KEY, task.ttlMs) + numberMember(POLL_KEY, task.pollIntervalMs);
}

/** As JSON.stringify writes a number member: left out when undefined, `null` when not finite. */
function numberMember(key: string, value: number | undefined): string {
  if (value === undefined) return '';
  return `,${key}:${Number.isFinite(value) ? String(value) : 'null'}`;
}

function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  // A non-object `_meta` (no valid CallToolResult has one) has nothing to drop.
  if (typeof meta !== 'object' || meta === null || !(RELATED_TASK in meta)) return result;
  const { [RELATED_TASK]: _dropped, ...rest } = meta;
  const copy = { ...result };
  if (Object.keys(rest).length > 0) copy._meta = rest;
  else delete copy._meta;
  return copy;
}
