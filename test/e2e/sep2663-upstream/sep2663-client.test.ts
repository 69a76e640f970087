import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe.concurrent.each(STORES)('a SEP-2663 server behind the shim, SEP-2663 clients (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: ALICE, capabilities: { elicitation: {} } });
  const upstreamTask = async (tool: string, key: string, value: string) =>
    (await stack.stats()).tasks.find((t) => t.tool === tool && t.arguments[key] === value);

  it("answers plainly when the upstream's polymorphic tools/call answers plainly", async () => {
    const reply = await client().callTool('echo', { text: `plain-${store}` });
    expect(reply.body.result.resultType).toBe('complete');
    expect(textOf(reply.body.result)).toBe(`Echo: plain-${store}`);
  });

  it('reads an answer on an event stream the upstream leaves open, without waiting for its end', async () => {
    const startedAt = Date.now();
    const reply = await client().callTool('echo', { text: `sse-${store}`, sse: true });
    expect(textOf(reply.body.result)).toBe(`Echo: sse-${store}`);
    // The fixture ends that stream only after 30 s.
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it("backs the shim's task with the upstream's task: own id, statusMessage mirrored, the upstream result", async () => {
    const c = client();
    const label = `slow-${store}`;
    const created = await c.createTask('slow', { seconds: 1.5, label });
    expect(created.status).toBe('working');
    const working = await c.waitForTask(created.taskId, (t) => t.statusMessage === `Working ${label}`);
    expect(working.status).toBe('working');
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe(`Done ${label}`);
    const upstream = await upstreamTask('slow', 'label', label);
    expect(upstream?.status).toBe('completed');
    // The client holds the shim's own id, never the upstream's.
    expect(created.taskId).not.toBe(upstream?.taskId);
  });

  it("surfaces the upstream task's inputRequests and returns the tasks/update answer with the upstream's tasks/update", async () => {
    const c = client();
    const item = `build-${store}`;
    const created = await c.createTask('approve', { item });
    const asking = await c.waitForStatus(created.taskId, 'input_required');
    const [[key, request]] = Object.entries(asking.inputRequests as Record<string, Json>) as [[string, Json]];
    expect(request).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: `Approve ${item}?`, requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] } },
    });
    expect((await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { approve: true } } })).status).toBe(200);
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(textOf(done.result)).toBe(`Approved ${item}`);
    const upstream = await upstreamTask('approve', 'item', item);
    expect(Object.values(upstream?.answers ?? {})).toEqual([{ action: 'accept', content: { approve: true } }]);
  });

  it('passes MRTR input the upstream asks before its task back to the client, and the retry to the upstream', async () => {
    const c = client();
    const call = { name: 'ask_first', arguments: { topic: `queues-${store}` } };
    const first = await c.result('tools/call', call);
    expect(first.resultType).toBe('input_required');
    const [[key, request]] = Object.entries(first.inputRequests as Record<string, Json>) as [[string, Json]];
    expect(request.params.message).toBe(`Who asks about queues-${store}?`);
    const second = await c.result('tools/call', { ...call, inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } }, requestState: first.requestState });
    // The upstream's task ends inside the auto window: the client gets its result plainly.
    const result = second.resultType === 'task' ? (await c.waitForStatus(second.taskId, TERMINAL)).result : second;
    expect(textOf(result)).toBe(`Hello Ada, about queues-${store}`);
  });

  it("ends failed with the upstream's error when the upstream task fails", async () => {
    const c = client();
    const created = await c.createTask('explode', { reason: `boom-${store}` });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: `Failed: boom-${store}` });
    expect(done.statusMessage).toBe(`The upstream's task failed: Failed: boom-${store}`);
  });

  it('forwards a cancel to the upstream with tasks/cancel, whose task ends cancelled', async () => {
    const c = client();
    const label = `cancel-${store}`;
    const created = await c.createTask('slow', { seconds: 30, label });
    await pollUntil(() => upstreamTask('slow', 'label', label), (t) => t?.status === 'working');
    expect((await c.cancelTask(created.taskId)).status).toBe(200);
    expect((await c.getTask(created.taskId)).body.result.status).toBe('cancelled');
    const upstream = await pollUntil(() => upstreamTask('slow', 'label', label), (t) => t?.status === 'cancelled', { timeoutMs: 10_000 });
    expect(upstream?.status).toBe('cancelled');
  });

  it("pushes the mirrored task's changes to a listen stream, ending with the upstream's result", async () => {
    const c = client();
    const label = `listen-${store}`;
    const created = await c.createTask('slow', { seconds: 1, label });
    const stream = await c.listen({ notifications: { taskIds: [created.taskId] } });
    try {
      const ack = await stream.nextMessage();
      expect(ack.params.notifications.taskIds).toEqual([created.taskId]);
      const done = await stream.nextMessage((m) => m.method === 'notifications/tasks' && m.params.status === 'completed', 15_000);
      expect(textOf(done.params.result)).toBe(`Done ${label}`);
    } finally {
      stream.close();
    }
  });

  it('speaks 2026-07-28 to the upstream as the spec asks: no header or _meta problem in any request', async () => {
    await client().callTool('echo', { text: 'conformance' });
    const stats = await stack.stats();
    expect(stats.requests['tools/call']).toBeGreaterThan(0);
    expect(stats.violations).toEqual([]);
  });
});
