import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { inTaskInputArgs, useNativeStack } from '../../support/native-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
// native_haiku's sampling request must reach the client inside the sync window (MRTR): a window
// far longer than the upstream needs, so that a loaded host does not turn it into a task first.
const stack = useNativeStack({ stores: STORES, shimArgs: inTaskInputArgs({ native_haiku: { mode: 'required', syncWindowMs: 15_000 } }) });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const CAPABILITIES = { elicitation: {}, sampling: {} };

describe.concurrent.each(STORES)('a 2025-11-25 task server behind the shim, SEP-2663 clients (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { capabilities: CAPABILITIES });

  it('runs a required tool as an upstream task: status message mirrored, the upstream result as the task result', async () => {
    const c = client();
    const created = await c.createTask('native_work', { seconds: 1.5, label: `req-${store}` });
    expect(created.status).toBe('working');
    const progressing = await c.waitForTask(created.taskId, (t) => /^Working req-\w+: \d+%$/.test(t.statusMessage ?? ''));
    expect(progressing.status).toBe('working');
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe(`Done req-${store}`);
    // The upstream's related-task _meta names its own id, which means nothing to our clients.
    expect(JSON.stringify(done.result)).not.toContain('related-task');
    // One upstream task, created with the shim task's TTL.
    const upstream = (await stack.stats()).tasks.filter((t) => t.arguments?.label === `req-${store}`);
    expect(upstream.map((t) => t.status)).toEqual(['completed']);
    expect(upstream[0]?.ttl).toBeGreaterThan(3_500_000);
  });

  it('runs an optional tool as an upstream task when the client opted in, and plainly when it did not', async () => {
    const c = client();
    const created = await c.createTask('native_quick', { text: `opt-${store}` });
    const done = await c.waitForStatus(created.taskId, TERMINAL);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe(`Echo: opt-${store}`);
    const plain = await c.callTool('native_quick', { text: `sync-${store}` }, { tasks: false });
    expect(plain.body.result.resultType).toBe('complete');
    expect(textOf(plain.body.result)).toBe(`Echo: sync-${store}`);
  });

  it('surfaces an elicitation the upstream task sends as inputRequests and returns the tasks/update answer to it', async () => {
    const c = client();
    const created = await c.createTask('native_confirm', { filename: `e-${store}.txt` });
    const asking = await c.waitForStatus(created.taskId, 'input_required');
    const [[key, request]] = Object.entries(asking.inputRequests as Record<string, Json>) as [[string, Json]];
    expect(request).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `Delete e-${store}.txt?`,
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
      },
    });
    expect((await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } })).status).toBe(200);
    const done = await c.waitForStatus(created.taskId, TERMINAL);
    expect(textOf(done.result)).toBe(`Deleted e-${store}.txt`);
  });

  it('asks for a sampling request of the upstream task before the task exists (MRTR), and the answered retry becomes the task', async () => {
    const c = client();
    const call = { name: 'native_haiku', arguments: { topic: 'queues' } };
    const first = await c.result('tools/call', call);
    expect(first.resultType).toBe('input_required');
    expect(first).not.toHaveProperty('taskId');
    const [[key, request]] = Object.entries(first.inputRequests as Record<string, Json>) as [[string, Json]];
    expect(request.method).toBe('sampling/createMessage');
    expect(request.params.messages[0].content.text).toBe('Write a haiku about queues');
    const haiku = 'Jobs wait in a line / one worker takes the next / the queue breathes again';
    const answer = { role: 'assistant', content: { type: 'text', text: haiku }, model: 'test-model' };
    const second = await c.result('tools/call', { ...call, inputResponses: { [key]: answer }, requestState: first.requestState });
    expect(second.resultType).toBe('task');
    const done = await c.waitForStatus(second.taskId, TERMINAL);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe(haiku);
  });

  it('ends failed, naming the upstream, when the upstream task fails', async () => {
    const c = client();
    const created = await c.createTask('native_fail', { reason: `disk full on ${store}` });
    const done = await c.waitForStatus(created.taskId, TERMINAL);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: `The upstream's task failed: Failed: disk full on ${store}` });
    expect(done.statusMessage).toBe(done.error.message);
  });

  it('acks a cancel and forwards it to the upstream; the task ends cancelled once the upstream confirmed', async () => {
    const c = client();
    const label = `cancel-${store}`;
    const created = await c.createTask('native_work', { seconds: 30, label });
    await c.waitForTask(created.taskId, (t) => (t.statusMessage ?? '').startsWith(`Working ${label}`));
    expect((await c.cancelTask(created.taskId)).status).toBe(200);
    const ended = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 10_000 });
    expect(ended).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client; the upstream confirmed.' });
    const upstreamTask = (await stack.stats()).tasks.find((t) => t.arguments?.label === label);
    expect(upstreamTask?.status).toBe('cancelled');
  });

  it('refuses a required tool to a client that did not opt in, and never starts its upstream task', async () => {
    const c = client();
    const label = `refused-${store}`;
    const reply = await c.callTool('native_work', { seconds: 0, label }, { tasks: false });
    expect(reply.body.error.code).toBe(-32021);
    expect((await stack.stats()).tasks.filter((t) => t.arguments?.label === label)).toEqual([]);
  });
});
