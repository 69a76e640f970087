import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

// An upstream of its own: the last test kills it.
let upstream: DemoUpstreamProcess;
let shim: ShimProcess;

beforeAll(async () => {
  upstream = await spawnDemoUpstream(['--port', '0']);
  shim = await startShimProcess({ upstreamUrl: upstream.url });
}, 60_000);

afterAll(async () => {
  await shim?.stop();
  upstream?.killGroup();
});

describe('passthrough of the legacy requests the shim does not answer itself', () => {
  it('forwards a request and its answer within the client session', async () => {
    const session = await LegacySession.open(shim.url);
    const reply = await session.post({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 'p1', result: {} });
  });

  it('answers the client with its own session id, never the upstream one', async () => {
    const session = await LegacySession.open(shim.url);
    const res = await fetch(shim.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session.sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'p2', method: 'ping' }),
    });
    await res.text();
    expect(res.status).toBe(200);
    // The demo upstream (the official SDK server) names its session on every answer.
    expect(res.headers.get('mcp-session-id')).toBe(session.sessionId);
  });

  it('answers 502 with a JSON-RPC -32603 at once when the upstream is gone', async () => {
    const session = await LegacySession.open(shim.url);
    upstream.killGroup();
    await upstream.exited;
    const started = Date.now();
    const reply = await session.post({ jsonrpc: '2.0', id: 'p3', method: 'ping' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32603, message: expect.stringMatching(/^Upstream unreachable/) } });
  });
});
