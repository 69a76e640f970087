import type { InputRequest, JsonRpcErrorObject, PolledTask, TaskRecord, TaskStatus } from '../../core/task.js';
import type { TaskOutcome } from '../task-store.js';
import { ANSWER_FIELD, INPUT_REQUEST_FIELD } from './keys.js';

/**
 * How a task record lies in its Redis hash. Scalars are plain fields the Lua scripts can compare;
 * JSON values are stored as JSON text that no script decodes (Lua's cjson turns `{}` into `[]`
 * and rounds large numbers), so they round-trip byte for byte.
 */

const STRING_FIELDS = ['taskId', 'principal', 'origin', 'sessionId', 'tool', 'status', 'statusMessage', 'upstreamTaskId', 'upstreamSessionId'] as const;
const NUMBER_FIELDS = ['createdAt', 'lastUpdatedAt', 'startedAt', 'ttlMs', 'pollIntervalMs'] as const;
const JSON_FIELDS = ['arguments', 'result', 'error', 'clientCapabilities', 'clientInfo'] as const;
const CANCEL_REQUESTED_FIELD = 'cancelRequested';

const STRING_SET = new Set<string>(STRING_FIELDS);
const NUMBER_SET = new Set<string>(NUMBER_FIELDS);
const JSON_SET = new Set<string>(JSON_FIELDS);

/**
 * Field/value pairs, ready for HSET, appended to `fields` (a script's leading arguments, so that
 * they are not copied once more). Absent optional fields are not written.
 */
export function encodeTask(task: TaskRecord, fields: string[] = []): string[] {
  for (const name of STRING_FIELDS) {
    const value = task[name];
    if (value !== undefined) fields.push(name, value);
  }
  for (const name of NUMBER_FIELDS) {
    const value = task[name];
    if (value !== undefined) fields.push(name, String(value));
  }
  for (const name of JSON_FIELDS) {
    const value = task[name];
    if (value !== undefined) fields.push(name, JSON.stringify(value));
  }
  fields.push(CANCEL_REQUESTED_FIELD, task.cancelRequested ? '1' : '0');
  for (const [key, request] of Object.entries(task.inputRequests)) {
    fields.push(INPUT_REQUEST_FIELD + key, JSON.stringify(request));
  }
  for (const [key, answer] of Object.entries(task.inputResponses)) {
    fields.push(ANSWER_FIELD + key, encodeAnswer(answer));
  }
  return fields;
}

/** An answer is stored as JSON; a missing one as `null`, since JSON has no `undefined`. */
export function encodeAnswer(answer: unknown): string {
  return JSON.stringify(answer) ?? 'null';
}

/** The fields a finish writes besides the status. */
export function encodeOutcome(outcome: TaskOutcome): string[] {
  if (outcome.status === 'completed') return ['result', JSON.stringify(outcome.result)];
  if (outcome.status === 'cancelled') return ['statusMessage', outcome.statusMessage];
  return ['error', JSON.stringify(outcome.error), 'statusMessage', outcome.statusMessage];
}

/** The record in a hash (HGETALL as an object); `undefined` for a missing key. */
export function decodeTask(hash: Record<string, string>): TaskRecord | undefined {
  return decodeEntries(Object.entries(hash));
}

/** The record in a flat HGETALL reply, as the scripts return it. */
export function decodeFlatTask(flat: readonly string[]): TaskRecord | undefined {
  const entries: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) entries.push([flat[i]!, flat[i + 1]!]);
  return decodeEntries(entries);
}

function decodeEntries(entries: readonly [string, string][]): TaskRecord | undefined {
  if (entries.length === 0) return undefined;
  const record: Record<string, unknown> = {};
  const inputRequests: [string, unknown][] = [];
  const inputResponses: [string, unknown][] = [];
  for (const [field, value] of entries) {
    if (field.startsWith(INPUT_REQUEST_FIELD)) {
      inputRequests.push([field.slice(INPUT_REQUEST_FIELD.length), JSON.parse(value)]);
    } else if (field.startsWith(ANSWER_FIELD)) {
      inputResponses.push([field.slice(ANSWER_FIELD.length), JSON.parse(value)]);
    } else if (STRING_SET.has(field)) {
      record[field] = value;
    } else if (NUMBER_SET.has(field)) {
      record[field] = Number(value);
    } else if (JSON_SET.has(field)) {
      record[field] = JSON.parse(value);
    } else if (field === CANCEL_REQUESTED_FIELD) {
      record[field] = value === '1';
    }
    // Anything else (withdrawn keys) is bookkeeping of the scripts, not part of the record.
  }
  // fromEntries defines own properties, so an input key named `__proto__` stays a plain key.
  record.inputRequests = Object.fromEntries(inputRequests);
  record.inputResponses = Object.fromEntries(inputResponses);
  return record as unknown as TaskRecord;
}

/** The fields a status poll reads (HMGET), in this order; the rest of a record no poll shows. */
export const POLL_FIELDS = ['principal', 'status', 'statusMessage', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs', 'result', 'error'] as const;

/**
 * The poll view in an HMGET reply of POLL_FIELDS; undefined for a missing key or a task of
 * another principal. Outstanding input requests are fields of their own, which HMGET cannot
 * list: for `input_required` the caller reads the whole hash (decodePolledHash).
 */
export function decodePolled(taskId: string, values: readonly (string | null)[], principal: string): PolledTask | undefined {
  if (values[0] !== principal) return undefined;
  return {
    taskId,
    status: values[1] as TaskStatus,
    statusMessage: values[2] ?? undefined,
    createdAt: numberOf(values[3]),
    lastUpdatedAt: numberOf(values[4]),
    ttlMs: numberOf(values[5]),
    pollIntervalMs: numberOf(values[6]),
    result: jsonOf<Record<string, unknown>>(values[7]),
    error: jsonOf<JsonRpcErrorObject>(values[8]),
    inputRequests: {},
  };
}

/** The poll view in a whole hash (HGETALL as an object), with the outstanding requests. */
export function decodePolledHash(taskId: string, hash: Record<string, string>, principal: string): PolledTask | undefined {
  if (hash.principal !== principal) return undefined;
  const status = hash.status as TaskStatus;
  const inputRequests: [string, InputRequest][] = [];
  if (status === 'input_required') {
    for (const field in hash) if (field.startsWith(INPUT_REQUEST_FIELD)) inputRequests.push([field.slice(INPUT_REQUEST_FIELD.length), JSON.parse(hash[field]!) as InputRequest]);
  }
  return {
    taskId,
    status,
    statusMessage: hash.statusMessage,
    createdAt: numberOf(hash.createdAt),
    lastUpdatedAt: numberOf(hash.lastUpdatedAt),
    ttlMs: numberOf(hash.ttlMs),
    pollIntervalMs: numberOf(hash.pollIntervalMs),
    result: jsonOf<Record<string, unknown>>(hash.result),
    error: jsonOf<JsonRpcErrorObject>(hash.error),
    // fromEntries defines own properties, so an input key named `__proto__` stays a plain key.
    inputRequests: Object.fromEntries(inputRequests),
  };
}

/** A flat HGETALL reply (as a script returns it) as an object without a prototype. */
export function hashOfFlat(flat: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

/** As decodeEntries reads a JSON field: a missing one stays undefined. */
function jsonOf<T>(value: string | null | undefined): T | undefined {
  return value === null || value === undefined ? undefined : (JSON.parse(value) as T);
}

/** As decodeEntries reads a number field: a missing one stays undefined. */
function numberOf(value: string | null | undefined): number {
  return (value === null || value === undefined ? undefined : Number(value)) as number;
}
