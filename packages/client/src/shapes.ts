import { POLL_INTERVAL_FIELD as POLL, TASK_STATUSES, TTL_FIELD as TTL, type TaskStatus } from './wire.js';
import type { CallToolResult, TaskError, TaskInputRequest, TaskSnapshot } from './types.js';

/**
 * Hand-written checks of the server's answers: just enough to trust the fields the helper
 * reads, with errors that say what was wrong and where. Unknown extra fields are tolerated.
 */

export class InvalidAnswerError extends Error {
  constructor(where: string, problem: string) {
    super(`Invalid answer from the server (${where}): ${problem}`);
    this.name = 'InvalidAnswerError';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}

export function asTaskError(value: unknown): TaskError | undefined {
  if (!isRecord(value) || typeof value.code !== 'number' || typeof value.message !== 'string') return undefined;
  return value.data === undefined ? { code: value.code, message: value.message } : { code: value.code, message: value.message, data: value.data };
}

/** A `CallToolResult` (plain or inlined in a task), returned without its `resultType`. */
export function toCallToolResult(value: unknown, where: string): CallToolResult {
  if (!isRecord(value)) throw new InvalidAnswerError(where, 'the result is not an object');
  if (!Array.isArray(value.content)) throw new InvalidAnswerError(where, 'the result has no content array');
  if (value.isError !== undefined && typeof value.isError !== 'boolean') throw new InvalidAnswerError(where, 'isError is not a boolean');
  const { resultType: _resultType, ...rest } = value;
  return rest as CallToolResult;
}

/**
 * A `Task` or `DetailedTask` (CreateTaskResult, GetTaskResult, notifications/tasks params).
 * Keeps only the task fields: `resultType` and `_meta` are the envelope's, not the task's.
 */
export function toTaskSnapshot(value: unknown, where: string): TaskSnapshot {
  if (!isRecord(value)) throw new InvalidAnswerError(where, 'the task is not an object');
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt } = value;
  const ttlMs = value[TTL];
  const pollIntervalMs = value[POLL];
  if (typeof taskId !== 'string' || taskId === '') throw new InvalidAnswerError(where, 'taskId is missing');
  if (!isStatus(status)) throw new InvalidAnswerError(where, `unknown task status ${JSON.stringify(status)}`);
  if (typeof createdAt !== 'string' || typeof lastUpdatedAt !== 'string') {
    throw new InvalidAnswerError(where, 'createdAt and lastUpdatedAt must be strings');
  }
  if (ttlMs !== null && typeof ttlMs !== 'number') throw new InvalidAnswerError(where, `${TTL} must be a number or null`);
  if (pollIntervalMs !== undefined && (typeof pollIntervalMs !== 'number' || !(pollIntervalMs >= 0))) {
    throw new InvalidAnswerError(where, `${POLL} must be a non-negative number`);
  }
  if (statusMessage !== undefined && typeof statusMessage !== 'string') throw new InvalidAnswerError(where, 'statusMessage must be a string');

  const task: TaskSnapshot = { taskId, status, createdAt, lastUpdatedAt, ttlMs };
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  if (pollIntervalMs !== undefined) task.pollIntervalMs = pollIntervalMs;
  switch (status) {
    case 'input_required':
      task.inputRequests = toInputRequests(value.inputRequests, where);
      break;
    case 'completed':
      // A CreateTaskResult never carries the result; a completed DetailedTask must.
      if (value.result !== undefined) task.result = toCallToolResult(value.result, `${where} result`);
      break;
    case 'failed': {
      if (value.error === undefined) break;
      const error = asTaskError(value.error);
      if (!error) throw new InvalidAnswerError(where, 'error must be {code: number, message: string}');
      task.error = error;
      break;
    }
    default:
      break;
  }
  return task;
}

function toInputRequests(value: unknown, where: string): Record<string, TaskInputRequest> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new InvalidAnswerError(where, 'inputRequests is not an object');
  const out: Record<string, TaskInputRequest> = {};
  for (const [key, request] of Object.entries(value)) {
    if (!isRecord(request) || typeof request.method !== 'string') {
      throw new InvalidAnswerError(where, `inputRequests["${key}"] has no method`);
    }
    const params = request.params ?? {};
    if (!isRecord(params)) throw new InvalidAnswerError(where, `inputRequests["${key}"].params is not an object`);
    out[key] = { method: request.method, params };
  }
  return out;
}

export type ToolCallAnswer =
  | { kind: 'result'; result: CallToolResult }
  | { kind: 'task'; task: TaskSnapshot }
  | { kind: 'input'; inputRequests: Record<string, TaskInputRequest>; requestState?: string };

/**
 * The polymorphic `tools/call` result (MCP 2026-07-28 `resultType`, MRTR, and SEP-2663): `complete` (or absent, pre-2026), `task`, or
 * `input_required` (MRTR: input the call needs before it answers or becomes a task).
 */
export function classifyToolCallResult(value: Record<string, unknown>, tool: string): ToolCallAnswer {
  const where = `tools/call ${tool}`;
  const resultType = value.resultType ?? 'complete';
  switch (resultType) {
    case 'complete':
      return { kind: 'result', result: toCallToolResult(value, where) };
    case 'task':
      return { kind: 'task', task: toTaskSnapshot(value, where) };
    case 'input_required': {
      const inputRequests = toInputRequests(value.inputRequests, where);
      const { requestState } = value;
      if (requestState !== undefined && typeof requestState !== 'string') throw new InvalidAnswerError(where, 'requestState must be a string');
      if (Object.keys(inputRequests).length === 0 && requestState === undefined) {
        throw new InvalidAnswerError(where, 'an input_required result needs inputRequests or requestState');
      }
      return requestState === undefined ? { kind: 'input', inputRequests } : { kind: 'input', inputRequests, requestState };
    }
    default:
      throw new InvalidAnswerError(where, `unknown resultType ${JSON.stringify(resultType)}`);
  }
}
