import type { NewTask, TaskRecord } from '../core/task.js';

/**
 * The record a new task starts as. Optional fields left `undefined` are dropped, so that every
 * store hands back the same shape (Redis cannot hold an `undefined` field).
 */
export function initialRecord(task: NewTask): TaskRecord {
  const record: TaskRecord = {
    ...task,
    status: 'working',
    lastUpdatedAt: task.createdAt,
    inputRequests: {},
    inputResponses: {},
    cancelRequested: false,
  };
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as unknown as TaskRecord;
}
