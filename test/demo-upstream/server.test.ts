import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../../src/demo-upstream/server.js';
import { connectDemoClient, textOf } from '../support/demo-upstream-client.js';

const PROTOCOL = '2025-11-25';
const ACCEPT_BOTH = 'application/json, text/event-stream';

let upstream: DemoUpstream;

beforeAll(async () => {
  upstream = await startDemoUpstream();
});

afterAll(async () => {
  await upstream?.close();
});

function sessionIdOf(client: Client): string {
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId;
  if (sessionId === undefined) throw new Error('client has no session');
  return sessionId;
}

function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(upstream.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': PROTOCOL, ...headers },
    body,
  });
}

const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

describe('demo upstream HTTP sessions', () => {
  it('gives each client its own session', async () => {
    const [first, second] = await Promise.all([connectDemoClient(upstream.url), connectDemoClient(upstream.url)]);
    expect(sessionIdOf(first)).toMatch(/^[0-9a-f-]{36}$/);
    expect(sessionIdOf(first)).not.toBe(sessionIdOf(second));
    const results = await Promise.all([first, second].map((client) => client.callTool({ name: 'greet', arguments: { name: 'x' } })));
    expect(results.map(textOf)).toEqual(['Hello, x!', 'Hello, x!']);
    await Promise.all([first.close(), second.close()]);
  });

  it('refuses a request without a session unless it is initialize', async () => {
    const response = await post(ping);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('answers an unknown session with 404 so the client starts over', async () => {
    const response = await post(ping, { 'mcp-session-id': 'f00dfeed-0000-4000-8000-000000000000' });
    expect(response.status).toBe(404);
  });

  it('answers a body that is not JSON with a parse error', async () => {
    const response = await post('{not json');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32700 } });
  });

  it('serves MCP only at /mcp', async () => {
    const response = await fetch(new URL('/other', upstream.url), { method: 'POST', body: ping });
    expect(response.status).toBe(404);
  });

  it('opens one server-to-client SSE stream per session on GET', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const initialized = await post(initialize);
    await initialized.body?.cancel();
    const sessionId = initialized.headers.get('mcp-session-id') ?? '';
    const openStream = (signal: AbortSignal) =>
      fetch(upstream.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL },
        signal,
      });

    const controller = new AbortController();
    const stream = await openStream(controller.signal);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((await openStream(controller.signal)).status).toBe(409);
    controller.abort();
  });

  it('ends a session on DELETE', async () => {
    const client = await connectDemoClient(upstream.url);
    const sessionId = sessionIdOf(client);
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    expect((await post(ping, { 'mcp-session-id': sessionId })).status).toBe(404);
    await client.close();
  });
});

describe('closing the demo upstream', () => {
  it('does not wait for open streams or running calls', async () => {
    const own = await startDemoUpstream();
    const client = await connectDemoClient(own.url);
    const call = client.callTool({ name: 'slow_compute', arguments: { seconds: 30 } });
    call.catch(() => undefined);
    const closing = Date.now();
    await own.close();
    expect(Date.now() - closing).toBeLessThan(2_000);
    expect(own.activeToolCalls()).toBe(0);
    await expect(call).rejects.toThrow();
    await client.close();
  });
});
