import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/core/task.js';
import { createTaskMembers, renderDetailedTask } from '../../../src/wire/sep2663/render.js';
import { taskRecord, TRICKY_TEXT } from '../../support/task-record.js';

const base: TaskRecord = taskRecord();
const RELATED = 'io.modelcontextprotocol/related-task';
const ASK = { method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } };

describe('DetailedTask', () => {
  it('shows the outstanding requests of an input_required task', () => {
    const task: TaskRecord = { ...base, status: 'input_required', inputRequests: { 'elicit-1': ASK } };
    expect(renderDetailedTask(task)).toMatchObject({ status: 'input_required', inputRequests: { 'elicit-1': ASK } });
  });

  it('inlines a completed result with resultType complete, without the related-task _meta', () => {
    const result = { content: [], _meta: { [RELATED]: { taskId: 'x' }, keep: 1 } };
    expect(renderDetailedTask({ ...base, status: 'completed', result }).result).toEqual({ resultType: 'complete', content: [], _meta: { keep: 1 } });
    expect(renderDetailedTask({ ...base, status: 'completed', result: { content: [], _meta: { [RELATED]: {} } } }).result).toEqual({ resultType: 'complete', content: [] });
    expect(renderDetailedTask({ ...base, status: 'completed', result: { resultType: 'task', content: [] } }).result).toEqual({ resultType: 'task', content: [] });
    expect(renderDetailedTask({ ...base, status: 'completed' }).result).toEqual({ resultType: 'complete' });
  });

  it('shows a failed task’s error, or a -32603 from its statusMessage when it has none', () => {
    const error = { code: -32000, message: TRICKY_TEXT, data: { why: [null, true] } };
    expect(renderDetailedTask({ ...base, status: 'failed', error }).error).toEqual(error);
    expect(renderDetailedTask({ ...base, status: 'failed', statusMessage: 'boom' }).error).toEqual({ code: -32603, message: 'boom' });
    expect(renderDetailedTask({ ...base, status: 'failed' }).error).toEqual({ code: -32603, message: 'Task failed' });
  });
});

describe('CreateTaskResult members', () => {
  for (const [name, task] of Object.entries<TaskRecord>({
    'a fresh task': base,
    'a statusMessage of escapes and unicode': { ...base, statusMessage: TRICKY_TEXT },
    'a record that ended already': { ...base, status: 'completed', result: { content: [] } },
  })) {
    it(`are byte for byte the stringified working Task: ${name}`, () => {
      expect(`{${createTaskMembers(task)}}`).toBe(JSON.stringify(renderDetailedTask({ ...task, status: 'working' })));
    });
  }
});
