import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES });

const TASK_FIELDS = ['taskId', 'status', 'statusMessage', 'result', 'error', 'inputRequests', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs'];

function expectBareAck(reply: { status: number; body: Json }): void {
  expect(reply.status).toBe(200);
  expect(reply.body.error).toBeUndefined();
  expect(reply.body.result.resultType).toBe('complete');
  for (const field of TASK_FIELDS) expect(reply.body.result).not.toHaveProperty(field);
  expect(Object.keys(reply.body.result).sort()).toEqual(['_meta', 'resultType'].filter((k) => k in reply.body.result));
}

/** The key of the outstanding request whose message is `message`. */
function keyFor(task: Json, message: string): string {
  const entry = Object.entries(task.inputRequests as Record<string, Json>).find(([, r]) => r.params.message === message);
  if (!entry) throw new Error(`no input request '${message}' in ${JSON.stringify(task.inputRequests)}`);
  return entry[0];
}

describe.concurrent.each(STORES)('input_required and tasks/update (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  async function awaitInput(c: Sep2663Client, taskId: string, count = 1): Promise<Json> {
    return c.waitForTask(taskId, (t) => t.status === 'input_required' && Object.keys(t.inputRequests).length === count);
  }

  it('confirm_delete surfaces one elicitation/create form request in inputRequests', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'report.pdf' });
    expect(created.status).toBe('working');
    const task = await awaitInput(c, created.taskId);
    expect(task.resultType).toBe('complete');
    const [entry] = Object.values(task.inputRequests) as Json[];
    expect(Object.keys(entry).sort()).toEqual(['method', 'params']);
    expect(entry.method).toBe('elicitation/create');
    expect(entry.params.message).toBe('Delete report.pdf?');
    expect(entry.params.requestedSchema).toMatchObject({ type: 'object', properties: { confirm: { type: 'boolean' } } });
    expect(task).not.toHaveProperty('result');
    await c.cancelTask(created.taskId);
  });

  it('accepting with confirm: true completes with "Deleted …"; the ack carries no task fields', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'a.txt' });
    const task = await awaitInput(c, created.taskId);
    const key = Object.keys(task.inputRequests)[0] as string;
    expectBareAck(await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } }));
    const done = await c.waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Deleted a.txt');
    expect(done).not.toHaveProperty('inputRequests');
  });

  it('declining completes with "Kept …"', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'b.txt' });
    const task = await awaitInput(c, created.taskId);
    const key = Object.keys(task.inputRequests)[0] as string;
    expectBareAck(await c.updateTask(created.taskId, { [key]: { action: 'decline' } }));
    const done = await c.waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Kept b.txt');
  });

  it('multi_input: both keys outstanding, a partial answer keeps input_required and drops only the answered key, the second completes', async () => {
    const c = client();
    const created = await c.createTask('multi_input');
    const both = await awaitInput(c, created.taskId, 2);
    const nameKey = keyFor(both, 'What is your name?');
    const colorKey = keyFor(both, 'What is your favourite colour?');
    expect(nameKey).not.toBe(colorKey);

    expectBareAck(await c.updateTask(created.taskId, { [nameKey]: { action: 'accept', content: { name: 'Ada' } } }));
    const partial = await c.waitForTask(created.taskId, (t) => !(nameKey in (t.inputRequests ?? {})));
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual([colorKey]);

    // Answering the settled key again is acked and changes nothing.
    expectBareAck(await c.updateTask(created.taskId, { [nameKey]: { action: 'accept', content: { name: 'Eve' } } }));
    const unchanged = await c.result('tasks/get', { taskId: created.taskId });
    expect(unchanged.status).toBe('input_required');
    expect(Object.keys(unchanged.inputRequests)).toEqual([colorKey]);

    expectBareAck(await c.updateTask(created.taskId, { [colorKey]: { action: 'accept', content: { color: 'blue' } } }));
    const done = await c.waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Ada likes blue');
  });

  it('a duplicate update of an already answered key after completion is acked and leaves the task unchanged', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'dup.txt' });
    const key = Object.keys((await awaitInput(c, created.taskId)).inputRequests)[0] as string;
    const answer = { [key]: { action: 'accept', content: { confirm: true } } };
    expectBareAck(await c.updateTask(created.taskId, answer));
    expectBareAck(await c.updateTask(created.taskId, answer));
    const done = await c.waitForStatus(created.taskId, 'completed');
    expectBareAck(await c.updateTask(created.taskId, { [key]: { action: 'decline' } }));
    const after = await c.result('tasks/get', { taskId: created.taskId });
    expect(after.lastUpdatedAt).toBe(done.lastUpdatedAt);
    expect(textOf(after.result)).toBe('Deleted dup.txt');
  });

  it('answers for unknown keys are acked and change nothing', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'c.txt' });
    const before = await awaitInput(c, created.taskId);
    expectBareAck(await c.updateTask(created.taskId, { 'never-issued': { action: 'accept', content: { confirm: true } } }));
    expectBareAck(await c.updateTask(created.taskId, {}));
    const after = await c.result('tasks/get', { taskId: created.taskId });
    expect(after.status).toBe('input_required');
    expect(after.inputRequests).toEqual(before.inputRequests);
    await c.cancelTask(created.taskId);
  });

  it('an update on a working task and on a terminal task is a plain ack', async () => {
    const c = client();
    const working = await c.createTask('slow_compute', { seconds: 10 });
    expectBareAck(await c.updateTask(working.taskId, { anything: { action: 'accept' } }));
    expect((await c.result('tasks/get', { taskId: working.taskId })).status).toBe('working');
    await c.cancelTask(working.taskId);

    const terminal = await c.createTask('failing_job');
    const done = await c.waitForStatus(terminal.taskId, 'completed');
    expectBareAck(await c.updateTask(terminal.taskId, { anything: { action: 'accept' } }));
    const after = await c.result('tasks/get', { taskId: terminal.taskId });
    expect(after.status).toBe('completed');
    expect(after.lastUpdatedAt).toBe(done.lastUpdatedAt);
  });

  it('a malformed answer for an outstanding key (action missing) is -32602 naming the key, and nothing of that request is applied', async () => {
    const c = client();
    const created = await c.createTask('multi_input');
    const both = await awaitInput(c, created.taskId, 2);
    const nameKey = keyFor(both, 'What is your name?');
    const colorKey = keyFor(both, 'What is your favourite colour?');
    const reply = await c.updateTask(created.taskId, {
      [colorKey]: { action: 'accept', content: { color: 'red' } },
      [nameKey]: { content: { name: 'Ada' } },
    });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain(nameKey);
    expect(reply.body).not.toHaveProperty('result');
    const after = await c.result('tasks/get', { taskId: created.taskId });
    expect(after.status).toBe('input_required');
    expect(Object.keys(after.inputRequests).sort()).toEqual([nameKey, colorKey].sort());
    await c.cancelTask(created.taskId);
  });

  it('an input kind the creating request did not declare (no elicitation) is never surfaced, and the work gets an error', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'secret.txt' }, { capabilities: {} });
    const seen = new Set<string>();
    const done = await c.waitForTask(
      created.taskId,
      (t) => {
        seen.add(t.status);
        return ['completed', 'failed', 'cancelled'].includes(t.status);
      },
      { intervalMs: 10 },
    );
    expect(seen.has('input_required')).toBe(false);
    // The upstream was told the call takes no input (docs/decisions/0032): it refuses to ask, as it
    // would refuse this client directly, and the demo tool answers that error as its result.
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(textOf(done.result)).toMatch(/does not support (form )?elicitation/);
    expect(done).not.toHaveProperty('inputRequests');
  });
});
