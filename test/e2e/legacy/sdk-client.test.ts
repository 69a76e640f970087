import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, McpError, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis', 'embedded'] });

type Message = { type: string; task?: { taskId: string; status: string }; result?: unknown; error?: unknown };

async function drain(stream: AsyncGenerator<Message>): Promise<Message[]> {
  const seen: Message[] = [];
  for await (const message of stream) seen.push(message);
  return seen;
}

describe.each(['redis', 'embedded'] as const)('the official SDK client (experimental tasks) on the %s store', (store) => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  async function connect(onElicit?: (message: string) => ElicitResult): Promise<{ client: Client; elicitations: string[] }> {
    const client = new Client({ name: 'legacy-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const elicitations: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params.message);
      return onElicit ? onElicit(request.params.message) : { action: 'decline' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.shim(store).url)));
    clients.push(client);
    return { client, elicitations };
  }

  it('advertises the 2025-11-25 tasks capability merged into the upstream capabilities', async () => {
    const { client } = await connect();
    const caps = client.getServerCapabilities();
    expect(caps?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(caps?.tools).toBeDefined();
  });

  it('lists tools with execution.taskSupport from the shim policy', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({ greet: 'forbidden', slow_compute: 'optional', confirm_delete: 'optional', failing_job: 'required' });
  });

  it('runs slow_compute as a task to completion', async () => {
    const { client } = await connect();
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 1 } }, CallToolResultSchema, { task: { ttl: 60_000 } }) as AsyncGenerator<Message>,
    );
    expect(messages[0]?.type).toBe('taskCreated');
    expect(messages[0]?.task?.status).toBe('working');
    const last = messages.at(-1);
    expect(last?.type).toBe('result');
    expect(textOf(last?.result)).toBe('Computed result after 1s');
  });

  it('delivers the confirm_delete elicitation and its answer decides the result', async () => {
    const { client, elicitations } = await connect(() => ({ action: 'accept', content: { confirm: true } }));
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'a.txt' } }, CallToolResultSchema, { task: {} }) as AsyncGenerator<Message>,
    );
    expect(textOf(messages.at(-1)?.result)).toBe('Deleted a.txt');
    expect(elicitations).toEqual(['Delete a.txt?']);
  });

  it('keeps the file when the user declines', async () => {
    const { client } = await connect(() => ({ action: 'decline' }));
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'b.txt' } }, CallToolResultSchema, { task: {} }) as AsyncGenerator<Message>,
    );
    expect(textOf(messages.at(-1)?.result)).toBe('Kept b.txt');
  });

  it('lists exactly the tasks of this session, newest first', async () => {
    const { client: mine } = await connect();
    const { client: other } = await connect();
    const ids: string[] = [];
    for (const seconds of [0, 0]) {
      const created = await mine.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds }, task: {} } },
        (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
      );
      ids.push(created.task.taskId);
    }
    await other.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    );
    const listed = await mine.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toEqual([...ids].reverse());
    expect(listed.nextCursor).toBeUndefined();
  });

  it('cancels a running task, which then reads cancelled', async () => {
    const { client } = await connect();
    const stream = client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 30 } }, CallToolResultSchema, { task: {} });
    const first = (await stream.next()).value as Message;
    const taskId = first.task?.taskId as string;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await stream.return(undefined);
  });

  it('answers -32602 when cancelling a task that is already terminal', async () => {
    const { client } = await connect();
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 0 } }, CallToolResultSchema, { task: {} }) as AsyncGenerator<Message>,
    );
    const taskId = messages[0]?.task?.taskId as string;
    const error = await client.experimental.tasks.cancelTask(taskId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain("already in terminal status 'completed'");
  });

  it('shows failing_job as failed and returns its isError result from tasks/result', async () => {
    const { client } = await connect();
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'failing_job', arguments: {} }, CallToolResultSchema, { task: {} }) as AsyncGenerator<Message>,
    );
    const taskId = messages[0]?.task?.taskId as string;
    const status = await client.experimental.tasks.getTask(taskId);
    expect(status.status).toBe('failed');
    expect(status.statusMessage).toBe('Job failed: simulated failure');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
  });

  it('returns the original JSON-RPC error of protocol_error_job from tasks/result', async () => {
    const { client } = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'protocol_error_job', arguments: {}, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await pollUntil(() => client.experimental.tasks.getTask(taskId), (t) => t.status === 'failed', { timeoutMs: 10_000 });
    const error = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32603);
    expect((error as McpError).message).toContain('Simulated protocol error');
  });

  it('refuses a required tool without params.task with -32601', async () => {
    const { client } = await connect();
    const error = await client
      .request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema)
      .catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32601);
  });

  it('passes a forbidden tool through to the upstream synchronously', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    expect(textOf(result)).toBe('Hello, Ada!');
  });
});
