import type { NewTask, TaskRecord } from '../core/task.js';

/**
 * The record a new task starts as. Optional fields left `undefined` are dropped, so that every
 * store hands back the same shape (Redis cannot hold an `undefined` field).
 */
export function initialRecord(task: NewTask): TaskRecord {
  // Copied key by key rather than filtered through Object.entries: every creation passes here.
  const record: Record<string, unknown> = {};
  for (const key of Object.keys(task) as Array<keyof NewTask>) {
    if (task[key] !== undefined) record[key] = task[key];
  }
  record.status = 'working';
  record.lastUpdatedAt = task.createdAt;
  record.inputRequests = {};
  record.inputResponses = {};
  record.cancelRequested = false;
  return record as unknown as TaskRecord;
}
