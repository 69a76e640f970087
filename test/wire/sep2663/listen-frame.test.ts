import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/core/task.js';
import { META } from '../../../src/wire/sep2663/constants.js';
import { taskFrame, taskFramePrefix } from '../../../src/wire/sep2663/listen-frame.js';
import { renderDetailedTask } from '../../../src/wire/sep2663/render.js';
import { taskRecord } from '../../support/task-record.js';

const base: TaskRecord = taskRecord();

const records: Record<string, TaskRecord> = {
  working: base,
  input_required: { ...base, status: 'input_required', statusMessage: 'needs "you"', inputRequests: { k1: { method: 'elicitation/create', params: { message: 'ok?' } } } },
  completed: { ...base, status: 'completed', result: { content: [{ type: 'text', text: 'ünïcødé \u2028 done' }], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' } } } },
  failed: { ...base, status: 'failed', statusMessage: 'boom', error: { code: -32603, message: 'boom' } },
};

describe('notifications/tasks frames', () => {
  for (const id of ['L1', 7, 'quote " backslash \\ </script>', 0, -3]) {
    for (const [status, task] of Object.entries(records)) {
      it(`splices to exactly the stringified notification (id ${JSON.stringify(id)}, ${status})`, () => {
        const expected = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tasks', params: { _meta: { [META.subscriptionId]: id }, ...renderDetailedTask(task) } })}\n\n`;
        expect(taskFrame(taskFramePrefix(id), JSON.stringify(renderDetailedTask(task)))).toBe(expected);
      });
    }
  }
});
