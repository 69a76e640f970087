import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, record: true });

function expectBareAck(reply: { status: number; body: Json }): void {
  expect(reply.status).toBe(200);
  expect(reply.body.error).toBeUndefined();
  const { _meta: _ignored, ...rest } = reply.body.result;
  expect(rest).toEqual({ resultType: 'complete' });
}

describe.each(STORES)('tasks/cancel (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('cancelling a running slow_compute acks with no task fields and the task ends cancelled', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    expectBareAck(await c.cancelTask(created.taskId));
    const task = await c.waitForStatus(created.taskId, ['cancelled', 'completed', 'failed']);
    expect(task.status).toBe('cancelled');
    expect(task.resultType).toBe('complete');
    for (const field of ['result', 'error', 'inputRequests']) expect(task).not.toHaveProperty(field);
    expect(Date.parse(task.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(task.createdAt));
  });

  it('a cancel turns a non-terminal task cancelled in the same step (our rule): the next tasks/get already reads cancelled', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    expectBareAck(await c.cancelTask(created.taskId));
    expect((await c.result('tasks/get', { taskId: created.taskId })).status).toBe('cancelled');
  });

  it('the upstream call of a cancelled task is stopped (notifications/cancelled reaches the upstream)', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30, label: `stop-${store}` });
    const call = await pollUntil(
      async () => stack.recorder.messages.find((m) => m.method === 'tools/call' && (m.params?.arguments as Json)?.label === `stop-${store}`),
      (m) => m !== undefined,
    );
    expectBareAck(await c.cancelTask(created.taskId));
    await pollUntil(
      async () => stack.recorder.messages.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call!.id),
      Boolean,
      { timeoutMs: 5_000 },
    );
  });

  it('cancelling a task that waits for input ends it cancelled and withdraws its inputRequests', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'x.txt' });
    await c.waitForStatus(created.taskId, 'input_required');
    expectBareAck(await c.cancelTask(created.taskId));
    const task = await c.waitForStatus(created.taskId, 'cancelled');
    expect(task).not.toHaveProperty('inputRequests');
  });

  it('a cancel on a terminal task is the same empty ack and the task does not change', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 1.5 });
    const done = await c.waitForStatus(created.taskId, 'completed');
    expectBareAck(await c.cancelTask(created.taskId));
    const after = await c.result('tasks/get', { taskId: created.taskId });
    expect(after.status).toBe('completed');
    expect(after.lastUpdatedAt).toBe(done.lastUpdatedAt);
    expect(textOf(after.result)).toBe('Computed result after 1.5s');

    // A second cancel of a cancelled task is also just an ack.
    const other = await c.createTask('slow_compute', { seconds: 30 });
    expectBareAck(await c.cancelTask(other.taskId));
    const cancelled = await c.waitForStatus(other.taskId, 'cancelled');
    expectBareAck(await c.cancelTask(other.taskId));
    expect((await c.result('tasks/get', { taskId: other.taskId })).lastUpdatedAt).toBe(cancelled.lastUpdatedAt);
  });
});
