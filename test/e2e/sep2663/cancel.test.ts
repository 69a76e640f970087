import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import type { RecordedMessage } from '../../support/recording-proxy.js';
import { buildRequest, pollUntil, postRaw, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, record: true });

function expectBareAck(reply: { status: number; body: Json }): void {
  expect(reply.status).toBe(200);
  expect(reply.body.error).toBeUndefined();
  const { _meta: _ignored, ...rest } = reply.body.result;
  expect(rest).toEqual({ resultType: 'complete' });
}

describe.concurrent.each(STORES)('tasks/cancel (%s store)', (store) => {
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

  it('a client that closes the tools/call response inside the auto window cancels the task it was never told about', async () => {
    // A window far longer than the test needs, so that the client surely leaves inside it.
    const patient = await stack.startShim({ store, env: { SHIM_AUTO_WINDOW_MS: '20000' } });
    const label = `left-${store}`;
    const abort = new AbortController();
    const pending = new Sep2663Client(patient.url).callTool('slow_compute', { seconds: 30, label }, { signal: abort.signal }).catch((err: unknown) => err);
    const call = await pollUntil(
      async () => stack.recorder.messages.find((m) => m.method === 'tools/call' && (m.params?.arguments as Json)?.label === label),
      (m) => m !== undefined,
    );
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await pollUntil(
      async () => stack.recorder.messages.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === (call as RecordedMessage).id),
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

  it('neither notifications/cancelled for the creating request nor closing a listen stream cancels a task', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 }, { id: `create-${store}` });
    const { headers, body } = buildRequest('notifications/cancelled', { requestId: `create-${store}`, reason: 'changed my mind' });
    delete body.id;
    expect((await postRaw(c.url, JSON.stringify(body), headers)).status).toBe(202);
    const stream = await c.listen({ notifications: { taskIds: [created.taskId] } });
    await stream.nextMessage((m) => m.method === 'notifications/tasks');
    stream.close();
    // A change would show at once (a cancel is atomic); the task is still running.
    await c.result('tools/call', { name: 'greet', arguments: { name: 'sync point' } });
    expect((await c.result('tasks/get', { taskId: created.taskId })).status).toBe('working');
    await c.cancelTask(created.taskId);
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
