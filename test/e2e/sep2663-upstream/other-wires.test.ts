import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client, textOf, type Reply } from '../../support/sep2663-client.js';
import { ALICE, BOB, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

describe.concurrent.each(STORES)('a SEP-2663 server behind the shim: legacy wires, cross-wire reads, principals (%s store)', (store) => {
  const modern = (token = ALICE): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token, capabilities: { elicitation: {} } });
  const legacy = (token = ALICE): Promise<LegacySession> => LegacySession.open(stack.shim(store).url, { token });
  const upstreamTask = async (tool: string, key: string, value: string) =>
    (await stack.stats()).tasks.find((t) => t.tool === tool && t.arguments[key] === value);

  it("tasks/create dialect: pushes the upstream task's input request on the GET stream and sends the pushed answer upstream", async () => {
    const session = await legacy();
    const stream = session.openGetStream();
    try {
      const item = `dialect-${store}`;
      const created = await session.result('tasks/create', { name: 'approve', arguments: { item } });
      const push = await stream.next((e) => e.message?.method === 'elicitation/create');
      expect(push.message.params.message).toBe(`Approve ${item}?`);
      expect(push.message.params._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: created.taskId });
      expect((await session.answer(push.message.id, { action: 'accept', content: { approve: true } })).status).toBe(202);
      const done = await pollUntil(
        () => session.result('tasks/status', { taskId: created.taskId }),
        (t) => t.status === 'done' || t.status === 'error',
        { timeoutMs: 15_000 },
      );
      expect(done.status).toBe('done');
      expect(textOf(done.result)).toBe(`Approved ${item}`);
      expect(Object.values((await upstreamTask('approve', 'item', item))?.answers ?? {})).toEqual([{ action: 'accept', content: { approve: true } }]);
    } finally {
      stream.close();
    }
  });

  it('reads a task created on SEP-2663 on both legacy wires, with the upstream result', async () => {
    const label = `cross-${store}`;
    const created = await modern().createTask('slow', { seconds: 0.5, label });
    await modern().waitForStatus(created.taskId, 'completed');
    const session = await legacy();
    expect(await session.result('tasks/get', { taskId: created.taskId })).toMatchObject({ taskId: created.taskId, status: 'completed' });
    expect(textOf(await session.result('tasks/result', { taskId: created.taskId }))).toBe(`Done ${label}`);
    const dialect = await session.result('tasks/status', { taskId: created.taskId });
    expect(dialect.status).toBe('done');
    expect(textOf(dialect.result)).toBe(`Done ${label}`);
  });

  it("lists a legacy session's tasks from the shim's own records (tasks/list)", async () => {
    const session = await legacy();
    const label = `list-${store}`;
    const created = (await session.result('tools/call', { name: 'slow', arguments: { seconds: 0.3, label }, task: { ttl: 60_000 } })).task;
    const listed = await session.result('tasks/list');
    expect(listed.tasks.map((t: { taskId: string }) => t.taskId)).toContain(created.taskId);
    expect(created.taskId).not.toBe((await pollUntil(() => upstreamTask('slow', 'label', label), (t) => t !== undefined))?.taskId);
  });

  it("answers another principal's tasks/get, tasks/update and tasks/cancel exactly as for an unknown id, and nothing reaches the upstream", async () => {
    const item = `foreign-${store}`;
    const created = await modern().createTask('approve', { item });
    const task = await modern().waitForStatus(created.taskId, 'input_required');
    const key = Object.keys(task.inputRequests)[0] as string;
    const answer = { [key]: { action: 'accept', content: { approve: true } } };
    const bob = modern(BOB);
    const pairs: Array<[Reply, Reply]> = [
      [await bob.getTask(created.taskId, { id: 1 }), await bob.getTask(UNKNOWN_ID, { id: 1 })],
      [await bob.updateTask(created.taskId, answer, { id: 1 }), await bob.updateTask(UNKNOWN_ID, answer, { id: 1 })],
      [await bob.cancelTask(created.taskId, { id: 1 }), await bob.cancelTask(UNKNOWN_ID, { id: 1 })],
    ];
    for (const [foreign, unknown] of pairs) {
      expect(foreign.body.error.code).toBe(-32602);
      expect(foreign.status).toBe(unknown.status);
      expect(foreign.text).toBe(unknown.text);
    }
    const upstream = await upstreamTask('approve', 'item', item);
    expect(upstream?.status).toBe('input_required');
    expect(upstream?.answers).toEqual({});
    expect((await modern().result('tasks/get', { taskId: created.taskId })).status).toBe('input_required');
    await modern().cancelTask(created.taskId);
    const done = await modern().waitForStatus(created.taskId, TERMINAL, { timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client; the upstream confirmed.' });
    const upstream2 = await upstreamTask('approve', 'item', item);
    expect(upstream2?.status).toBe('cancelled');
    expect(upstream2?.cancels).toBe(1);
  });

  it('ends a legacy task-augmented call of a failing upstream task failed, readable on SEP-2663', async () => {
    const session = await legacy();
    const created = (await session.result('tools/call', { name: 'explode', arguments: { reason: `legacy-${store}` }, task: { ttl: 60_000 } })).task;
    const done = await modern().waitForStatus(created.taskId, TERMINAL);
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toBe(`The upstream's task failed: Failed: legacy-${store}`);
    expect((await session.result('tasks/get', { taskId: created.taskId })).status).toBe('failed');
  });
});
