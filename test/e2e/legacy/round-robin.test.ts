import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../../support/round-robin-proxy.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });

describe('legacy sessions through two replicas behind a round-robin proxy', () => {
  let proxy: RoundRobinProxy;
  beforeAll(async () => {
    const second = await stack.startShim();
    proxy = await startRoundRobinProxy([stack.shim().url, second.url]);
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('runs the SDK client flows with every request alternating replicas', async () => {
    const client = new Client({ name: 'rr-sdk', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { confirm: true } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    try {
      const before = proxy.served.length;
      const messages: Array<{ type: string; result?: unknown }> = [];
      for await (const m of client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'rr.txt' } }, CallToolResultSchema, { task: {} })) {
        messages.push(m as { type: string; result?: unknown });
      }
      expect(textOf(messages.at(-1)?.result)).toBe('Deleted rr.txt');
      const used = new Set(proxy.served.slice(before));
      expect(used).toEqual(new Set([0, 1]));
      const slow = [];
      for await (const m of client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 1 } }, CallToolResultSchema, { task: {} })) {
        slow.push(m as { type: string; result?: unknown });
      }
      expect(textOf(slow.at(-1)?.result)).toBe('Computed result after 1s');
      expect(textOf(await client.callTool({ name: 'greet', arguments: { name: 'RR' } }))).toBe('Hello, RR!');
    } finally {
      await client.close();
    }
  });

  it('serves the tasks/create dialect, its GET-stream push and the answer across replicas', async () => {
    const session = await LegacySession.open(proxy.url);
    const stream = session.openGetStream();
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'rr2.txt' } });
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    await session.answer(push.message.id, { action: 'accept', content: { confirm: true } });
    const done = await pollUntil(() => session.result('tasks/status', { taskId: created.taskId }), (t) => t.status === 'done', { timeoutMs: 10_000 });
    expect(textOf(done.result)).toBe('Deleted rr2.txt');
    const listed = await session.result('tasks/list');
    expect(listed.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([created.taskId]);
    stream.close();
  });

  it('resumes a GET stream on the other replica with Last-Event-ID', async () => {
    const session = await LegacySession.open(proxy.url);
    const first = session.openGetStream();
    const priming = await first.next((e) => e.id !== undefined && e.data === '');
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'rr3.txt' } });
    const pushed = await first.next((e) => e.message?.method === 'elicitation/create');
    first.close();
    const resumed = session.openGetStream(priming.id);
    const replayed = await resumed.next((e) => e.message?.method === 'elicitation/create');
    expect(replayed.id).toBe(pushed.id);
    await session.answer(replayed.message.id, { action: 'decline' });
    const done = await pollUntil(() => session.result('tasks/status', { taskId: created.taskId }), (t) => t.status === 'done', { timeoutMs: 10_000 });
    expect(textOf(done.result)).toBe('Kept rr3.txt');
    resumed.close();
  });
});
