import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../../src/demo-upstream/policies.js';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES });
const CALL = { name: 'test_tool_with_task', arguments: {} };

/** The one outstanding request of an MRTR answer, by key. */
function onlyRequest(answer: Json): [string, Json] {
  const entries = Object.entries(answer.inputRequests as Record<string, Json>);
  expect(entries).toHaveLength(1);
  return entries[0] as [string, Json];
}

function accept(content: Record<string, unknown>): Json {
  return { action: 'accept', content };
}

describe.concurrent.each(STORES)('input gathered before the task exists (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('a required tool asks for its input as MRTR, and the answered retry becomes the task that finishes with that answer', async () => {
    const c = client();
    const first = await c.result('tools/call', CALL);
    expect(first.resultType).toBe('input_required');
    expect(first).not.toHaveProperty('taskId');
    expect(typeof first.requestState).toBe('string');
    const [key, request] = onlyRequest(first);
    expect(request.method).toBe('elicitation/create');
    expect(request.params.requestedSchema.properties).toHaveProperty('user_name');

    const second = await c.result('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Alice' }) }, requestState: first.requestState });
    expect(second.resultType).toBe('task');
    expect(second.status).toBe('working');
    expect(typeof second.taskId).toBe('string');
    expect(second).not.toHaveProperty('requestState');
    expect(second).not.toHaveProperty('inputRequests');

    const done = await c.waitForStatus(second.taskId, 'completed');
    expect(textOf(done.result)).toBe('Task completed for Alice');
  });

  it('asks again, with the same requestState, after a retry that answered nothing', async () => {
    const c = client();
    const first = await c.result('tools/call', CALL);
    const [key] = onlyRequest(first);
    const again = await c.result('tools/call', { ...CALL, inputResponses: {}, requestState: first.requestState });
    expect(again.resultType).toBe('input_required');
    expect(onlyRequest(again)[0]).toBe(key);
    const task = await c.result('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Bo' }) }, requestState: again.requestState });
    expect(task.resultType).toBe('task');
    expect(textOf((await c.waitForStatus(task.taskId, 'completed')).result)).toBe('Task completed for Bo');
  });

  it('answers -32602 for a malformed answer on the retry, and a corrected retry still becomes the task', async () => {
    const c = client();
    const first = await c.result('tools/call', CALL);
    const [key] = onlyRequest(first);
    const bad = await c.request('tools/call', { ...CALL, inputResponses: { [key]: { content: { user_name: 'x' } } }, requestState: first.requestState });
    expect(bad.body.error.code).toBe(-32602);
    expect(bad.body.error.data).toEqual({ key });
    const task = await c.result('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Cy' }) }, requestState: first.requestState });
    expect(task.resultType).toBe('task');
    expect(textOf((await c.waitForStatus(task.taskId, 'completed')).result)).toBe('Task completed for Cy');
  });

  it('answers -32021 to a retry that no longer declares the tasks extension, and hands out no task', async () => {
    const c = client();
    const first = await c.result('tools/call', CALL);
    const [key] = onlyRequest(first);
    const reply = await c.request('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Di' }) }, requestState: first.requestState }, { tasks: false });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe(-32021);
  });

  it('a required tool called by a client that declared no input kind answers the task handle at once', async () => {
    const c = client();
    const created = await c.result('tools/call', CALL, { capabilities: {} });
    expect(created.resultType).toBe('task');
    // The input it then needs is of a kind the client did not declare, and the upstream was told
    // so (docs/decisions/0032): it refuses to ask, as it would refuse that client directly (an SDK
    // server throws, and the demo tool answers the error as its result).
    const done = await c.waitForStatus(created.taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(textOf(done.result)).toMatch(/does not support (form )?elicitation/);
  });

  it('a client that does not declare the extension still gets -32021 before a required tool runs', async () => {
    const reply = await client().request('tools/call', CALL, { tasks: false });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe(-32021);
  });
});

describe('input gathered before the task exists, across replicas and policies (redis store)', () => {
  let other: ShimProcess;
  let windowed: ShimProcess;
  beforeAll(async () => {
    other = await stack.startShim();
    const file = join(mkdtempSync(join(tmpdir(), 'mts-mrtr-task-')), 'policy.json');
    const tools = {
      ...DEMO_TOOL_POLICIES,
      confirm_delete: { mode: 'auto', syncWindowMs: 10_000 },
      test_tool_with_task: { mode: 'required', syncWindowMs: 10_000 },
    };
    writeFileSync(file, JSON.stringify({ tools }));
    windowed = await stack.startShim({ args: ['--policy', file] });
  });

  it('the retry sent to another replica answers the upstream call the first one started, and becomes the task', async () => {
    const first = await new Sep2663Client(stack.shim('redis').url).result('tools/call', CALL);
    const [key] = onlyRequest(first);
    const onOther = new Sep2663Client(other.url);
    const task = await onOther.result('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Eve' }) }, requestState: first.requestState });
    expect(task.resultType).toBe('task');
    const done = await new Sep2663Client(stack.shim('redis').url).waitForStatus(task.taskId, 'completed');
    expect(textOf(done.result)).toBe('Task completed for Eve');
  });

  it('an auto tool asks as MRTR, and a call that ends inside the window after the answer answers plainly', async () => {
    const c = new Sep2663Client(windowed.url);
    const call = { name: 'confirm_delete', arguments: { filename: 'w.txt' } };
    const first = await c.result('tools/call', call);
    expect(first.resultType).toBe('input_required');
    const [key] = onlyRequest(first);
    const second = await c.result('tools/call', { ...call, inputResponses: { [key]: accept({ confirm: true }) }, requestState: first.requestState });
    expect(second.resultType).toBe('complete');
    expect(textOf(second)).toBe('Deleted w.txt');
  });

  it('a required tool that ends inside the window after the answer still answers the task handle', async () => {
    const c = new Sep2663Client(windowed.url);
    const first = await c.result('tools/call', CALL);
    const [key] = onlyRequest(first);
    const task = await c.result('tools/call', { ...CALL, inputResponses: { [key]: accept({ user_name: 'Fay' }) }, requestState: first.requestState });
    expect(task.resultType).toBe('task');
    expect(task.status).toBe('working');
    // The round waited for the end of the work (about 2 s) inside its 10 s window.
    const read = await c.result('tasks/get', { taskId: task.taskId });
    expect(read.status).toBe('completed');
    expect(textOf(read.result)).toBe('Task completed for Fay');
  });
});
