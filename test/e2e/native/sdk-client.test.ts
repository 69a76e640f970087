import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { streamToolTask } from '../../support/sdk-task-stream.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useNativeStack({ stores: STORES });

describe.each(STORES)('the official SDK client on the legacy wire, upstream tasks behind the shim (%s store)', (store) => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  async function connect(): Promise<{ client: Client; asked: string[] }> {
    const client = new Client({ name: 'native-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content as { text?: string };
      asked.push(first.text ?? '');
      return { role: 'assistant', content: { type: 'text', text: 'five seven five' }, model: 'test-model' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.shim(store).url)));
    clients.push(client);
    return { client, asked };
  }

  it('sees the upstream taskSupport and runs a required tool as a task to its result', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]))).toMatchObject({ native_work: 'required', native_quick: 'optional' });
    const messages = await streamToolTask(client, 'native_work', { seconds: 1, label: `sdk-${store}` });
    expect(messages[0]?.type).toBe('taskCreated');
    expect(messages.at(-1)?.type).toBe('result');
    expect(textOf(messages.at(-1)?.result)).toBe(`Done sdk-${store}`);
  });

  it('runs an optional tool as a task when asked, and as a plain call when not', async () => {
    const { client } = await connect();
    const messages = await streamToolTask(client, 'native_quick', { text: 'as task' });
    expect(messages[0]?.type).toBe('taskCreated');
    expect(textOf(messages.at(-1)?.result)).toBe('Echo: as task');
    expect(textOf(await client.callTool({ name: 'native_quick', arguments: { text: 'plain' } }))).toBe('Echo: plain');
  });

  it("answers the upstream task's elicitation through the client's elicitation handler", async () => {
    const { client, asked } = await connect();
    const messages = await streamToolTask(client, 'native_confirm', { filename: `sdk-${store}.txt` });
    expect(asked).toEqual([`Delete sdk-${store}.txt?`]);
    expect(textOf(messages.at(-1)?.result)).toBe(`Deleted sdk-${store}.txt`);
  });

  it("answers the upstream task's sampling request through the client's sampling handler", async () => {
    const { client, asked } = await connect();
    const messages = await streamToolTask(client, 'native_haiku', { topic: 'relays' });
    expect(asked).toEqual(['Write a haiku about relays']);
    expect(textOf(messages.at(-1)?.result)).toBe('five seven five');
  });

  it("forwards the client's tasks/cancel to the upstream, whose task ends cancelled", async () => {
    const { client } = await connect();
    const label = `sdk-cancel-${store}`;
    const created = await client.request(
      { method: 'tools/call', params: { name: 'native_work', arguments: { seconds: 30, label }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    // The mirror runs once the upstream's progress shows in the task.
    await pollUntil(() => client.experimental.tasks.getTask(created.task.taskId), (t) => (t.statusMessage ?? '').startsWith(`Working ${label}`));
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    // The answer waits for the upstream's word: its task is cancelled by then.
    expect(cancelled).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client; the upstream confirmed.' });
    expect((await stack.stats()).tasks.find((t) => t.arguments?.label === label)?.status).toBe('cancelled');
  });

  it('reports a failed upstream task as a failed task', async () => {
    const { client } = await connect();
    const messages = await streamToolTask(client, 'native_fail', { reason: 'no' });
    expect(messages.at(-1)?.type).toBe('error');
    const task = messages.find((m) => m.type === 'taskCreated')?.task;
    const got = await client.experimental.tasks.getTask(task!.taskId);
    expect(got.status).toBe('failed');
    expect(got.statusMessage).toBe("The upstream's task failed: Failed: no");
  });
});
