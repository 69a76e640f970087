import type { TaskRecord } from '../../src/core/task.js';

/** A fixed record (alice's working `slow_compute`) for tests of pure functions over records. */
export function taskRecord(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: 'T1234567890123456789012',
    principal: 'alice',
    origin: 'sep2663',
    tool: 'slow_compute',
    arguments: {},
    status: 'working',
    createdAt: 1_700_000_000_000,
    lastUpdatedAt: 1_700_000_000_500,
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
    inputRequests: {},
    inputResponses: {},
    cancelRequested: false,
    clientCapabilities: {},
    ...overrides,
  };
}

/** A status message with every escape and unicode case JSON text has. */
export const TRICKY_TEXT = 'ünïcødé \u2028\u2029 "quoted" \\ back\\slash </script> \u0000\u001f\t\n lone \ud800 pair \ud83d\ude00 \u007f';
