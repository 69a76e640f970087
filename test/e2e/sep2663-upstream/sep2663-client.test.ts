import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });
const TERMINAL = ['completed', 'failed', 'cancelled'];
// The cancel of a task an upstream task backs ends with the upstream's answer (docs/decisions/0024).
const GRACE_MS = 5_000;
const AWAITING = 'Cancel requested; waiting for the upstream to confirm.';
const CONFIRMED = 'Cancelled by the client; the upstream confirmed.';
const UNCONFIRMED = `Cancelled by the client; the upstream did not confirm within ${GRACE_MS} ms.`;

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

  it("acks a cancel at once; the record reads 'Cancel requested…' until the upstream's task ends, then cancelled as confirmed", async () => {
    const c = client();
    const label = `cancel-${store}`;
    // The upstream takes a second to end its task after the cancel, as a cooperative cancel does.
    const created = await c.createTask('slow', { seconds: 30, label, cancelAfterMs: 1_000 });
    await c.waitForTask(created.taskId, (t) => t.statusMessage === `Working ${label}`);
    const ack = await c.cancelTask(created.taskId);
    expect(ack.status).toBe(200);
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    expect((await c.getTask(created.taskId)).body.result).toMatchObject({ status: 'working', statusMessage: AWAITING });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: 'cancelled', statusMessage: CONFIRMED });
    const upstream = await upstreamTask('slow', 'label', label);
    expect(upstream?.status).toBe('cancelled');
    expect(upstream?.cancels).toBe(1);
  });

  it('ends a task the upstream finished before the cancel completed, with its real result, after one tasks/cancel', async () => {
    const c = client();
    const marker = `too-late-${store}`;
    const created = await c.createTask('cancel_too_late', { marker });
    await c.waitForTask(created.taskId, (t) => t.statusMessage === 'Working');
    expect((await c.cancelTask(created.taskId)).body.result).toMatchObject({ resultType: 'complete' });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Finished before the cancel');
    expect((await upstreamTask('cancel_too_late', 'marker', marker))?.cancels).toBe(1);
  });

  it('ends the task cancelled, saying the upstream did not confirm, once the grace passes without its word', async () => {
    const c = client();
    const marker = `ignored-${store}`;
    const created = await c.createTask('cancel_ignored', { marker });
    await c.waitForTask(created.taskId, (t) => t.statusMessage === 'Working');
    const startedAt = Date.now();
    expect((await c.cancelTask(created.taskId)).body.result).toMatchObject({ resultType: 'complete' });
    // The cancel reaches the upstream while the record still waits for its word.
    await pollUntil(() => upstreamTask('cancel_ignored', 'marker', marker), (t) => t?.cancels === 1, { timeoutMs: 2_000 });
    expect((await c.getTask(created.taskId)).body.result).toMatchObject({ status: 'working', statusMessage: AWAITING });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: GRACE_MS + 5_000, intervalMs: 100 });
    const tookMs = Date.now() - startedAt;
    expect(done).toMatchObject({ status: 'cancelled', statusMessage: UNCONFIRMED });
    expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS - 200);
    expect(tookMs).toBeLessThan(GRACE_MS + 4_000);
    const upstream = await upstreamTask('cancel_ignored', 'marker', marker);
    expect(upstream?.status).toBe('working');
    expect(upstream?.cancels).toBe(1);
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
