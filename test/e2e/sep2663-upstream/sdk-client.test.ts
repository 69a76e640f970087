import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { streamToolTask } from '../../support/sdk-task-stream.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });

describe.each(STORES)('the official SDK client on the legacy wire, a SEP-2663 server behind the shim (%s store)', (store) => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  async function connect(): Promise<{ client: Client; asked: string[] }> {
    const client = new Client({ name: 'sep2663-upstream-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.shim(store).url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
    clients.push(client);
    return { client, asked };
  }

  it("runs a task-augmented call as the upstream's task, to the upstream's result", async () => {
    const { client } = await connect();
    const label = `sdk-${store}`;
    const messages = await streamToolTask(client, 'slow', { seconds: 1, label });
    expect(messages[0]?.type).toBe('taskCreated');
    expect(messages.at(-1)?.type).toBe('result');
    expect(textOf(messages.at(-1)?.result)).toBe(`Done ${label}`);
    expect((await stack.stats()).tasks.find((t) => t.arguments.label === label)?.status).toBe('completed');
  });

  it("answers the upstream task's inputRequests through the client's elicitation handler", async () => {
    const { client, asked } = await connect();
    const item = `sdk-item-${store}`;
    const messages = await streamToolTask(client, 'approve', { item });
    expect(asked).toEqual([`Approve ${item}?`]);
    expect(textOf(messages.at(-1)?.result)).toBe(`Approved ${item}`);
    const upstream = (await stack.stats()).tasks.find((t) => t.arguments.item === item);
    expect(Object.values(upstream?.answers ?? {})).toEqual([{ action: 'accept', content: { approve: true } }]);
  });

  it("answers the client's tasks/cancel with the cancelled task once the upstream confirmed, after one upstream tasks/cancel", async () => {
    const { client } = await connect();
    const label = `sdk-cancel-${store}`;
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow', arguments: { seconds: 30, label, cancelAfterMs: 500 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    await pollUntil(() => client.experimental.tasks.getTask(created.task.taskId), (t) => t.statusMessage === `Working ${label}`);
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: 'cancelled', statusMessage: 'Cancelled by the client; the upstream confirmed.' });
    const upstream = (await stack.stats()).tasks.find((t) => t.arguments.label === label);
    expect(upstream?.status).toBe('cancelled');
    expect(upstream?.cancels).toBe(1);
  });

  it("answers -32602 naming 'completed' when the upstream's task finished before the cancel, and keeps its result", async () => {
    const { client } = await connect();
    const marker = `sdk-too-late-${store}`;
    const created = await client.request({ method: 'tools/call', params: { name: 'cancel_too_late', arguments: { marker }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    await pollUntil(() => client.experimental.tasks.getTask(created.task.taskId), (t) => t.statusMessage === 'Working');
    await expect(client.experimental.tasks.cancelTask(created.task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Cannot cancel task: already in terminal status 'completed'"),
    });
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('completed');
    expect((await stack.stats()).tasks.find((t) => t.arguments.marker === marker)?.cancels).toBe(1);
  });

  it('reports a failed upstream task as a failed task', async () => {
    const { client } = await connect();
    const messages = await streamToolTask(client, 'explode', { reason: `sdk-${store}` });
    expect(messages.at(-1)?.type).toBe('error');
    const task = messages.find((m) => m.type === 'taskCreated')?.task;
    const got = await client.experimental.tasks.getTask(task!.taskId);
    expect(got.status).toBe('failed');
    expect(got.statusMessage).toBe(`The upstream's task failed: Failed: sdk-${store}`);
  });
});
