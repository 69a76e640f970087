import type { TaskRecord, TaskStatus } from '../../core/task.js';
import { FIELD_TABLE } from '../../mapping/fields.js';
import { STATUS_TABLE } from '../../mapping/statuses.js';
import type { PolledTask } from '../../store/task-store.js';
import { isoTime } from './iso-time.js';

const TTL = FIELD_TABLE.ttlMs.sep2663;
const POLL = FIELD_TABLE.pollIntervalMs.sep2663;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const TTL_KEY = JSON.stringify(TTL);
const POLL_KEY = JSON.stringify(POLL);
const RELATED_TASK_KEY = JSON.stringify(RELATED_TASK);
/** A member whose key is an integer, at any depth (only the top level matters; deeper ones just take the slow path). */
const INDEX_KEY = /[{,]"(?:0|[1-9]\d*)":/;

/** The `Task` fields every SEP-2663 task shape starts with. */
function renderTask(task: TaskRecord): Record<string, unknown> {
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

/**
 * The members (no braces, no `resultType`) of a flat `CreateTaskResult` as JSON text: `working`
 * (our rule) whatever the record says by now, with none of the detailed fields. The same bytes as
 * `JSON.stringify(renderTask({ ...task, status: 'working' }))` without the copy.
 */
export function createTaskMembers(task: TaskRecord): string {
  return taskMembers(task, 'working');
}

/**
 * The members (no braces) of `JSON.stringify(renderDetailedTask(record))`, byte for byte, from a
 * poll: built as text, with the stored JSON spliced in rather than parsed and stringified again.
 * This relies on the store holding exactly what `JSON.stringify` wrote (src/store/redis/codec.ts),
 * which stringifies to itself once parsed.
 */
export function detailedTaskMembers(task: PolledTask): string {
  const out = taskMembers(task, task.status);
  switch (task.status) {
    case 'input_required': {
      let requests = '';
      for (const [key, request] of task.inputRequests) requests += `${requests ? ',' : ''}${JSON.stringify(key)}:${request}`;
      return `${out},"inputRequests":{${requests}}`;
    }
    case 'completed':
      return `${out},"result":${completeResult(task.result)}`;
    case 'failed':
      // A stored `null` reads as no error, as `task.error ?? …` does once parsed.
      return `${out},"error":${task.error !== undefined && task.error !== 'null' ? task.error : JSON.stringify({ code: -32603, message: task.statusMessage ?? 'Task failed' })}`;
    default:
      return out;
  }
}

/** The members of `renderTask`, as `JSON.stringify` writes them, with the given status. */
function taskMembers(task: PolledTask | TaskRecord, status: TaskStatus): string {
  let out = `"taskId":${JSON.stringify(task.taskId)},"status":${JSON.stringify(STATUS_TABLE[status].sep2663)}`;
  if (task.statusMessage !== undefined) out += `,"statusMessage":${JSON.stringify(task.statusMessage)}`;
  out += `,"createdAt":"${isoTime(task.createdAt)}","lastUpdatedAt":"${isoTime(task.lastUpdatedAt)}"`;
  return out + numberMember(TTL_KEY, task.ttlMs) + numberMember(POLL_KEY, task.pollIntervalMs);
}

/** As JSON.stringify writes a number member: left out when undefined, `null` when not finite. */
function numberMember(key: string, value: number | undefined): string {
  if (value === undefined) return '';
  return `,${key}:${Number.isFinite(value) ? String(value) : 'null'}`;
}


/**
 * `{ resultType: 'complete', ...withoutRelatedTask(result) }` as JSON. The stored members follow
 * `resultType` unchanged unless the result has a resultType or related-task of its own, or an
 * integer-like key (which JSON.stringify puts before resultType). Text that only looks so (inside
 * a string) takes the parsing path too, which is always right.
 */
function completeResult(stored: string | undefined): string {
  if (stored === undefined || stored === '{}') return '{"resultType":"complete"}';
  if (stored.charCodeAt(0) === 0x7b && !stored.includes('"resultType"') && !stored.includes(RELATED_TASK_KEY) && !INDEX_KEY.test(stored)) {
    return `{"resultType":"complete",${stored.slice(1)}`;
  }
  return JSON.stringify({ resultType: 'complete', ...withoutRelatedTask((JSON.parse(stored) as Record<string, unknown> | null) ?? {}) });
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
