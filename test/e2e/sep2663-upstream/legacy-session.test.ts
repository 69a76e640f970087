import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { streamToolTask } from '../../support/sdk-task-stream.js';
import { pollUntil, textOf, type Json } from '../../support/sep2663-client.js';
import { ALICE, BOB, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

/**
 * 2025-11-25 sessions in front of a pure 2026-07-28 upstream (the SEP-2663 fixture), which has no
 * initialize and no sessions: the shim holds the session and translates each of its requests
 * into one stateless request (docs/decisions/0030-legacy-sessions-stateless-upstream.md).
 */
const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });

describe.each(STORES)('the official SDK client in a 2025-11-25 session, a pure 2026-07-28 server behind the shim (%s store)', (store) => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  async function connect(): Promise<Client> {
    const client = new Client({ name: 'legacy-session-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.shim(store).url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
    clients.push(client);
    return client;
  }

  const upstreamTask = async (tool: string, key: string, value: string) => (await stack.stats()).tasks.find((t) => t.tool === tool && t.arguments[key] === value);

  it("initializes from the upstream's server/discover, with the shim's tasks capability and no initialize sent upstream", async () => {
    const client = await connect();
    expect(client.getServerCapabilities()).toEqual({
      tools: {},
      resources: {},
      prompts: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    expect(client.getServerVersion()?.name).toBe('mcp-tasks-shim');
    const { requests } = await stack.stats();
    expect(requests.initialize).toBeUndefined();
    expect(requests['server/discover']).toBeGreaterThan(0);
  });

  it("lists the upstream's tools with the shim's taskSupport", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    expect(tools.find((t) => t.name === 'slow')?.execution?.taskSupport).toBe('optional');
    expect(tools.find((t) => t.name === 'echo')?.execution?.taskSupport).toBe('optional');
  });

  it('calls a plain tool statelessly and answers under the request id', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'echo', arguments: { text: `plain-${store}` } });
    expect(textOf(result)).toBe(`Echo: plain-${store}`);
    expect(result).not.toHaveProperty('resultType');
  });

  it("carries a plain call that the upstream answers with a task handle to the task's result", async () => {
    const client = await connect();
    const label = `plain-task-${store}`;
    const result = await client.callTool({ name: 'slow', arguments: { seconds: 0.5, label } });
    expect(textOf(result)).toBe(`Done ${label}`);
    expect((await upstreamTask('slow', 'label', label))?.status).toBe('completed');
  });

  it("runs a task-augmented call (callToolStream with a task) to the upstream task's result", async () => {
    const client = await connect();
    const label = `streamed-${store}`;
    const messages = await streamToolTask(client, 'slow', { seconds: 0.5, label });
    expect(messages[0]?.type).toBe('taskCreated');
    expect(messages.at(-1)?.type).toBe('result');
    expect(textOf(messages.at(-1)?.result)).toBe(`Done ${label}`);
  });

  it('pings the upstream through the session', async () => {
    const client = await connect();
    const before = (await stack.stats()).requests.ping ?? 0;
    await expect(client.ping()).resolves.toEqual({});
    expect((await stack.stats()).requests.ping).toBe(before + 1);
  });

  it("reads the upstream's resources and prompts without the 2026-07-28 members", async () => {
    const client = await connect();
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual(['fixture://readme']);
    expect(listed).not.toHaveProperty('cacheScope');
    expect((await client.readResource({ uri: 'fixture://readme' })).contents[0]).toMatchObject({ text: 'The fixture reads fine.' });
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greeting']);
    const prompt = await client.getPrompt({ name: 'greeting', arguments: { who: store } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: `Say hello to ${store}` });
  });

  it('answers -32603 naming why when a plain call needs input inside its upstream task, and cancels that task', async () => {
    const client = await connect();
    const item = `plain-input-${store}`;
    const call = client.callTool({ name: 'approve', arguments: { item } });
    await expect(call).rejects.toMatchObject({ code: -32603 });
    await expect(call).rejects.toThrow(/elicitation\/create is not available for this call: a plain call declares no input capability/);
    expect((await pollUntil(() => upstreamTask('approve', 'item', item), (t) => t?.status === 'cancelled', { timeoutMs: 10_000 }))?.status).toBe('cancelled');
  });
});

describe.each(STORES)('raw 2025-11-25 sessions in front of a pure 2026-07-28 server (%s store)', (store) => {
  const open = () => LegacySession.open(stack.shim(store).url, { token: ALICE });

  it('answers initialize with the session-era version asked for, and offers 2025-11-25 for any other', async () => {
    const initialize = async (protocolVersion: string) => {
      const res = await fetch(stack.shim(store).url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${ALICE}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      });
      expect(res.headers.get('mcp-session-id')).toBeTruthy();
      return ((await res.json()) as Json).result;
    };
    const older = await initialize('2025-06-18');
    expect(older.protocolVersion).toBe('2025-06-18');
    // Tasks do not exist before 2025-11-25.
    expect(older.capabilities.tasks).toBeUndefined();
    const unknown = await initialize('2031-01-01');
    expect(unknown.protocolVersion).toBe('2025-11-25');
    expect(unknown.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  it('accepts a client notification with 202 and sends the upstream nothing', async () => {
    const session = await open();
    const reply = await session.post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(reply.status).toBe(202);
    const { requests } = await stack.stats();
    expect(requests['notifications/roots/list_changed']).toBeUndefined();
    expect(requests['notifications/initialized']).toBeUndefined();
  });

  it("passes the upstream's own error on for a method it does not know", async () => {
    const session = await open();
    const body = await session.request('custom/unknown', {});
    expect(body.error).toEqual({ code: -32601, message: 'Method not found: custom/unknown' });
  });

  it("answers -32603 naming the upstream when the upstream's result is garbage", async () => {
    const session = await open();
    const body = await session.request('resources/read', { uri: 'fixture://garbage' });
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/^the upstream's resources\/read result is malformed \(contents:/);
  });

  it('answers -32603 naming why when the upstream asks a session request for input (MRTR)', async () => {
    const session = await open();
    const body = await session.request('prompts/get', { name: 'ask' });
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/asked for input on prompts\/get although the shim declared no input capability/);
  });

  it('answers -32602 for a tools/call without a tool name, before the upstream hears of it', async () => {
    const session = await open();
    const before = (await stack.stats()).requests['tools/call'] ?? 0;
    const body = await session.request('tools/call', { arguments: {} });
    expect(body.error.code).toBe(-32602);
    expect((await stack.stats()).requests['tools/call'] ?? 0).toBe(before);
  });

  it("stops a running plain call on the client's notifications/cancelled and cancels its upstream task", async () => {
    const session = await open();
    const label = `cancelled-${store}`;
    const id = `call-${store}`;
    const call = session.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { seconds: 30, label } } });
    const upstream = async () => (await stack.stats()).tasks.find((t) => t.arguments.label === label);
    await pollUntil(upstream, (t) => t?.status === 'working');
    expect((await session.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })).status).toBe(202);
    const answer = (await call).body as Json;
    expect(answer).toMatchObject({ id, error: { code: -32800 } });
    expect((await pollUntil(upstream, (t) => t?.status === 'cancelled', { timeoutMs: 10_000 }))?.cancels).toBe(1);
  });

  it("ends only the shim's session on DELETE: the session is gone, the GET stream before it had nothing of the upstream's", async () => {
    const session = await open();
    const stream = session.openGetStream();
    try {
      expect((await stream.ready).status).toBe(200);
      expect((await session.delete()).status).toBe(200);
      const after = await session.post({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} });
      expect(after.status).toBe(404);
      expect(stream.events.filter((e) => e.message !== undefined)).toEqual([]);
    } finally {
      stream.close();
    }
  });
});

describe('a 2025-11-25 session served by two replicas on one Redis, in front of a pure 2026-07-28 server', () => {
  /** Replica A runs the calls; replica B, a second shim on the same Redis and upstream, receives the cancels. */
  let replicaB: ShimProcess;
  beforeAll(async () => {
    replicaB = await stack.startShim();
  });

  const open = (token = ALICE) => LegacySession.open(stack.shim('redis').url, { token });
  const upstreamTask = async (label: string) => (await stack.stats()).tasks.find((t) => t.arguments.label === label);
  const slowCall = (session: LegacySession, id: string, label: string, seconds: number) =>
    session.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { seconds, label } } });
  const cancelAt = async (session: LegacySession, requestId: unknown) =>
    (await session.at(replicaB.url).post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } })).status;

  it('stops a call running on replica A when its notifications/cancelled reaches replica B, and cancels its upstream task once', async () => {
    const session = await open();
    const label = 'fleet-cancelled';
    const call = slowCall(session, 'fleet-call', label, 30);
    await pollUntil(() => upstreamTask(label), (t) => t?.status === 'working');
    expect(await cancelAt(session, 'fleet-call')).toBe(202);
    expect((await call).body).toMatchObject({ id: 'fleet-call', error: { code: -32800, message: 'tools/call was cancelled' } });
    expect((await pollUntil(() => upstreamTask(label), (t) => t?.status === 'cancelled', { timeoutMs: 10_000 }))?.cancels).toBe(1);
  });

  it('stops a call whose request id is a number, cancelled through replica B', async () => {
    const session = await open();
    const label = 'fleet-cancelled-number';
    const call = session.post({ jsonrpc: '2.0', id: 4242, method: 'tools/call', params: { name: 'slow', arguments: { seconds: 30, label } } });
    await pollUntil(() => upstreamTask(label), (t) => t?.status === 'working');
    expect(await cancelAt(session, 4242)).toBe(202);
    expect((await call).body).toMatchObject({ id: 4242, error: { code: -32800 } });
    expect((await pollUntil(() => upstreamTask(label), (t) => t?.status === 'cancelled', { timeoutMs: 10_000 }))?.cancels).toBe(1);
  });

  it("does not stop a call when another session's notifications/cancelled names its request id", async () => {
    const [alice, bob, aliceAgain] = await Promise.all([open(), open(BOB), open()]);
    const label = 'fleet-foreign-cancel';
    const call = slowCall(alice, 'shared-id', label, 2);
    await pollUntil(() => upstreamTask(label), (t) => t?.status === 'working');
    // Another principal's session, and another session of the same principal: neither names this call.
    expect(await cancelAt(bob, 'shared-id')).toBe(202);
    expect(await cancelAt(aliceAgain, 'shared-id')).toBe(202);
    expect(textOf((await call).body.result)).toBe(`Done ${label}`);
    expect((await upstreamTask(label))?.cancels).toBe(0);
  });

  it('sends no cancel to the other replicas for a request id longer than 256 characters', async () => {
    const session = await open();
    const label = 'fleet-long-id';
    const id = 'x'.repeat(257);
    const call = slowCall(session, id, label, 2);
    await pollUntil(() => upstreamTask(label), (t) => t?.status === 'working');
    expect(await cancelAt(session, id)).toBe(202);
    expect(textOf((await call).body.result)).toBe(`Done ${label}`);
    expect((await upstreamTask(label))?.cancels).toBe(0);
  });

  it('leaves nothing of a cancel that came before its request: the request then runs to its end', async () => {
    const session = await open();
    const label = 'fleet-early-cancel';
    expect(await cancelAt(session, 'early-call')).toBe(202);
    const answer = await slowCall(session, 'early-call', label, 0.5);
    expect(textOf(answer.body.result)).toBe(`Done ${label}`);
    expect((await upstreamTask(label))?.cancels).toBe(0);
  });

  it('accepts a notifications/cancelled without a usable request id with 202, and the call runs on', async () => {
    const session = await open();
    const label = 'fleet-bad-ids';
    const call = slowCall(session, 'bad-ids', label, 1);
    await pollUntil(() => upstreamTask(label), (t) => t?.status === 'working');
    for (const requestId of [undefined, null, { id: 'bad-ids' }, ['bad-ids'], true]) expect(await cancelAt(session, requestId)).toBe(202);
    expect(textOf((await call).body.result)).toBe(`Done ${label}`);
    expect((await upstreamTask(label))?.cancels).toBe(0);
  });
});
