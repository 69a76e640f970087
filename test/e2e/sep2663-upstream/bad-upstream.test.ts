import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const ID = '[\\w-]+';

/** Each fault of the fixture, and the statusMessage the task must end failed with. */
const FAULTS: Array<[string, RegExp]> = [
  ['garbage_call', /^The upstream's answer to tools\/call of garbage_call is not MCP: the upstream's tools\/call result is malformed \(/],
  ['garbage_task', new RegExp(`^The upstream's tasks/get for task ${ID} is not a task: the upstream's tasks/get result is malformed \\(status: `)],
  ['lost_task', new RegExp(`^The upstream no longer knows task ${ID} \\(tasks/get: -32602 Failed to retrieve task: Task not found\\)$`)],
  ['other_task', new RegExp(`^The upstream's tasks/get for task ${ID} describes another task \\(${ID}\\)$`)],
  ['status_backwards', new RegExp(`^The upstream's task ${ID} went from completed back to working$`)],
];

describe.concurrent.each(STORES)('a SEP-2663 upstream that gets its tasks wrong (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: ALICE });

  it.each(FAULTS)('%s: the task ends failed, within bounds, naming the fault', async (tool, message) => {
    const c = client();
    const created = await c.createTask(tool);
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toMatch(message);
    expect(done.error).toEqual({ code: -32603, message: done.statusMessage });
  });

  it('never_finishes: the mirror stops at the task TTL and tells the upstream to stop its task', async () => {
    const session = await LegacySession.open(stack.shim(store).url, { token: ALICE });
    const marker = `never-${store}`;
    const created = (await session.result('tools/call', { name: 'never_finishes', arguments: { marker }, task: { ttl: 2_000 } })).task;
    const upstream = await pollUntil(
      async () => (await stack.stats()).tasks.find((t) => t.arguments.marker === marker),
      (t) => t?.status === 'cancelled',
      { timeoutMs: 15_000 },
    );
    expect(upstream?.status).toBe('cancelled');
    // The record is failed or already gone with its TTL, never left working.
    const reply = await client().getTask(created.taskId);
    if (reply.body.result) expect(reply.body.result.status).toBe('failed');
    else expect(reply.body.error.code).toBe(-32602);
  });

  it('an upstream that asks for an input kind the client did not declare: the task ends failed, naming the request', async () => {
    const c = new Sep2663Client(stack.shim(store).url, { token: ALICE, capabilities: {} });
    const item = `undeclared-${store}`;
    const created = await c.createTask('approve', { item });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toMatch(
      new RegExp(`^Input request approve-\\d+ of the upstream's task ${ID} got no answer the upstream can take: -32601 The client did not declare support for elicitation/create$`),
    );
    // The upstream's task, still waiting, is told to stop.
    const upstream = await pollUntil(async () => (await stack.stats()).tasks.find((t) => t.arguments.item === item), (t) => t?.status === 'cancelled');
    expect(upstream?.status).toBe('cancelled');
  });

  it("refuses a malformed answer to the upstream's input request with -32602 naming the key, and sends nothing upstream", async () => {
    const c = new Sep2663Client(stack.shim(store).url, { token: ALICE, capabilities: { elicitation: {} } });
    const item = `malformed-${store}`;
    const created = await c.createTask('approve', { item });
    const asking = await c.waitForStatus(created.taskId, 'input_required');
    const key = Object.keys(asking.inputRequests)[0] as string;
    const reply = await c.updateTask(created.taskId, { [key]: { content: { approve: true } } });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain(key);
    expect((await stack.stats()).tasks.find((t) => t.arguments.item === item)?.answers).toEqual({});
    expect((await c.result('tasks/get', { taskId: created.taskId })).status).toBe('input_required');
    await c.cancelTask(created.taskId);
  });

  it('stays up: a plain call still answers after every fault', async () => {
    const reply = await client().callTool('echo', { text: 'still here' });
    expect(reply.body.result.content[0].text).toBe('Echo: still here');
  });
});
