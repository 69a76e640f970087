import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../support/cluster-keys.js';
import { useStack } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

// Every shim of this file runs with --redis-cluster on a three-master Redis Cluster.
const stack = useStack({ cluster: true });

type Message = { type: string; task?: { taskId: string; status: string }; result?: unknown };

async function drain(stream: AsyncGenerator<Message>): Promise<Message[]> {
  const seen: Message[] = [];
  for await (const message of stream) seen.push(message);
  return seen;
}

describe('the shim on a Redis Cluster', () => {
  let second: ShimProcess;
  const clients: Client[] = [];

  beforeAll(async () => {
    second = await stack.startShim();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  const sep = (shim: ShimProcess = stack.shim()): Sep2663Client => new Sep2663Client(shim.url);

  it('runs a SEP-2663 task to completion, polled with tasks/get', async () => {
    const c = sep();
    const created = await c.createTask('run_ci_pipeline', { branch: 'main' });
    expect(created.status).toBe('working');
    const done = await c.waitForStatus(created.taskId, ['completed', 'failed'], { timeoutMs: 30_000, intervalMs: 200 });
    expect(done.status).toBe('completed');
  });

  it('asks for input, takes the answer through tasks/update and completes', async () => {
    const c = sep();
    const created = await c.createTask('confirm_delete', { filename: 'cluster.txt' });
    const asking = await c.waitForTask(created.taskId, (task) => task.status === 'input_required', { timeoutMs: 15_000 });
    const key = Object.keys(asking.inputRequests as Record<string, Json>)[0] as string;
    const ack = await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } });
    expect(ack.body.error).toBeUndefined();
    const done = await c.waitForStatus(created.taskId, 'completed', { timeoutMs: 15_000 });
    expect(textOf(done.result)).toBe('Deleted cluster.txt');
  });

  it('cancels a running task, which stays cancelled', async () => {
    const c = sep();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    const cancelled = await c.cancelTask(created.taskId);
    expect(cancelled.body.error).toBeUndefined();
    expect((await c.waitForStatus(created.taskId, 'cancelled')).status).toBe('cancelled');
  });

  it('pushes a task change on subscriptions/listen', async () => {
    const c = sep();
    const created = await c.createTask('slow_compute', { seconds: 1.5 });
    const stream = await c.listen({ notifications: { taskIds: [created.taskId] } }, { id: 'cluster-listen' });
    try {
      expect(stream.status).toBe(200);
      const ack = await stream.nextMessage();
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      const note = await stream.nextMessage((m) => m.method === 'notifications/tasks' && m.params.status === 'completed', 20_000);
      expect(textOf(note.params.result)).toBe('Computed result after 1.5s');
    } finally {
      stream.close();
    }
  });

  it("serves a legacy SDK client's task, pushing the tool's elicitation to it", async () => {
    const client = new Client({ name: 'cluster-sdk', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const elicitations: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.shim().url)));
    clients.push(client);
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'legacy.txt' } }, CallToolResultSchema, {
        task: { ttl: 60_000 },
      }) as AsyncGenerator<Message>,
    );
    expect(messages[0]?.type).toBe('taskCreated');
    expect(textOf(messages.at(-1)?.result)).toBe('Deleted legacy.txt');
    expect(elicitations).toEqual(['Delete legacy.txt?']);
    const taskId = messages[0]?.task?.taskId as string;
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it('lets a second replica read, answer and see the end of a task created on the first', async () => {
    const created = await sep().createTask('confirm_delete', { filename: 'replica.txt' });
    const other = sep(second);
    const asking = await other.waitForTask(created.taskId, (task) => task.status === 'input_required', { timeoutMs: 15_000 });
    const key = Object.keys(asking.inputRequests as Record<string, Json>)[0] as string;
    await other.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: false } } });
    const done = await sep().waitForStatus(created.taskId, 'completed', { timeoutMs: 15_000 });
    expect(textOf(done.result)).toBe('Kept replica.txt');
  });

  it('keeps its keys spread over the masters, the queue under one hash tag', async () => {
    // Enough tasks that all of them landing on one master (a chance of 3^-19) would mean one slot for all.
    await Promise.all(Array.from({ length: 20 }, () => sep().createTask('failing_job')));
    const perNode = await Promise.all(stack.cluster.nodes.map((node) => clusterKeys({ ...stack.cluster, nodes: [node] }, 'mts:*')));
    expect(perNode.filter((keys) => keys.some((key) => key.startsWith('mts:task:'))).length).toBeGreaterThan(1);
    const queueKeys = (await clusterKeys(stack.cluster, '{mts:q}:*')).length;
    expect(queueKeys).toBeGreaterThan(0);
    const queueNodes = await Promise.all(stack.cluster.nodes.map((node) => clusterKeys({ ...stack.cluster, nodes: [node] }, '{mts:q}:*')));
    expect(queueNodes.filter((keys) => keys.length > 0)).toHaveLength(1);
  });
});
