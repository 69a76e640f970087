import type { TaskRecord } from '../core/task.js';
import type { PolledTask } from './task-store.js';

/** The poll view of a whole record, with its JSON values stringified as a store writes them. */
export function polledOf(task: TaskRecord): PolledTask {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    result: task.result === undefined ? undefined : JSON.stringify(task.result),
    error: task.error === undefined ? undefined : JSON.stringify(task.error),
    inputRequests:
      task.status === 'input_required' ? Object.entries(task.inputRequests).map(([key, request]) => [key, JSON.stringify(request)] as const) : [],
  };
}

/**
 * Entries in the order a record built from them (`Object.fromEntries`) lists its keys: array
 * indices first, ascending, then the rest as given. A key that needs moving is rare (ours are
 * `elicit-…`), so this usually returns its argument.
 */
export function inRecordKeyOrder<T>(entries: [string, T][]): [string, T][] {
  if (!entries.some(([key]) => isArrayIndex(key))) return entries;
  const indices = entries.filter(([key]) => isArrayIndex(key)).sort(([a], [b]) => Number(a) - Number(b));
  return [...indices, ...entries.filter(([key]) => !isArrayIndex(key))];
}

/** ECMAScript's array index: a canonical integer string below 2³² − 1. */
function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}
