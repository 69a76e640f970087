import { describe, expect, it } from 'vitest';
import { useBadUpstreamStack } from '../../support/bad-upstream-stack.js';
import type { StoreKind } from '../../support/e2e-stack.js';
import { Sep2663Client } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const TERMINAL = ['completed', 'failed', 'cancelled'];
const stack = useBadUpstreamStack(STORES);

/** Each fault of the upstream, and the statusMessage the task must end failed with. */
const FAULTS: Array<[string, RegExp]> = [
  ['garbage_create', /^The upstream answered the task-augmented tools\/call of garbage_create with a malformed task \(taskId: /],
  ['garbage_status', /^The upstream's tasks\/get for task garbage_status-\d+ is not a task \(taskId: .*status: /],
  ['unknown_task', /^The upstream no longer knows task unknown_task-\d+ \(tasks\/get: -32602 Task not found\)$/],
  ['status_backwards', /^The upstream's task status_backwards-\d+ went from completed back to working$/],
  ['result_never_comes', /^The upstream's task result_never_comes-\d+ completed but tasks\/result gave no result$/],
];

describe.concurrent.each(STORES)('an upstream that gets its tasks wrong (%s store)', (store) => {
  it.each(FAULTS)('%s: the task ends failed, within bounds, naming the fault', async (tool, message) => {
    const c = new Sep2663Client(stack.shim(store).url);
    const created = await c.createTask(tool);
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toMatch(message);
    expect(done.error).toEqual({ code: -32603, message: done.statusMessage });
  });

  it('stays up: a plain request still answers after every fault', async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const reply = await c.request('tools/list', {});
    expect(reply.body.result.tools.map((t: { name: string }) => t.name)).toContain('unknown_task');
  });
});
