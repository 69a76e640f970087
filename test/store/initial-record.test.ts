import { describe, expect, it } from 'vitest';
import type { NewTask } from '../../src/core/task.js';
import { initialRecord } from '../../src/store/initial-record.js';

// Required<>: a field added to NewTask fails to compile here until the test (and initialRecord) know it.
const full: Required<NewTask> = {
  taskId: 't1',
  principal: 'alice',
  origin: 'mcp-2025-11-25',
  sessionId: 's1',
  tool: 'greet',
  arguments: { name: 'x' },
  statusMessage: 'queued',
  createdAt: 1_000,
  startedAt: 1_001,
  ttlMs: 60_000,
  pollIntervalMs: 500,
  result: { content: [] },
  error: { code: -32603, message: 'no' },
  clientCapabilities: { elicitation: {} },
  clientInfo: { name: 'c', version: '1' },
};

describe('initialRecord', () => {
  it('keeps every field of the new task and seeds the rest as working', () => {
    expect(initialRecord(full)).toStrictEqual({
      ...full,
      status: 'working',
      lastUpdatedAt: 1_000,
      inputRequests: {},
      inputResponses: {},
      cancelRequested: false,
    });
  });

  it('leaves out optional fields that are undefined, so that every store hands back one shape', () => {
    const record = initialRecord({ ...full, sessionId: undefined, statusMessage: undefined, startedAt: undefined, result: undefined, error: undefined, clientInfo: undefined });
    for (const key of ['sessionId', 'statusMessage', 'startedAt', 'result', 'error', 'clientInfo']) expect(Object.hasOwn(record, key)).toBe(false);
  });
});
