import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, record: true, args: ['--max-sessions', '3'] });

const TOO_MANY_SESSIONS = 'Too many open sessions: this principal may hold 3 at once; retry when one of them ends';

async function initialize(url: string): Promise<{ status: number; sessionId: string | null; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'session-limits', version: '1.0.0' } },
    }),
  });
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), body: await res.json() };
}

function upstreamInitializeCount(): number {
  return stack.recorder.messages.filter((message) => message.method === 'initialize').length;
}

/** The upstream session a shim session maps to: a forwarded ping shows it at the recorder. */
async function upstreamSessionOf(session: LegacySession): Promise<string> {
  const id = `mark-${randomUUID()}`;
  expect((await session.post({ jsonrpc: '2.0', id, method: 'ping' })).status).toBe(200);
  const forwarded = stack.recorder.requests.find((request) => request.messages.some((message) => message.id === id));
  const upstreamSessionId = forwarded?.headers['mcp-session-id'];
  if (typeof upstreamSessionId !== 'string') throw new Error('the ping did not reach the upstream in a session');
  return upstreamSessionId;
}

function upstreamDeletes(upstreamSessionId: string): number {
  return stack.recorder.requests.filter((request) => request.method === 'DELETE' && request.headers['mcp-session-id'] === upstreamSessionId).length;
}

describe.each(STORES)('legacy sessions per principal (%s store)', (store) => {
  it('refuses the 4th session of a principal with HTTP 429 -32012 before the upstream hears of it, and takes one again after a DELETE', async () => {
    const url = stack.shim(store).url;
    const sessions = await Promise.all([1, 2, 3].map(() => LegacySession.open(url)));
    const before = upstreamInitializeCount();

    const refused = await initialize(url);
    expect(refused.status).toBe(429);
    expect(refused.sessionId).toBeNull();
    expect(refused.body).toEqual({ jsonrpc: '2.0', id: 'init', error: { code: -32012, message: TOO_MANY_SESSIONS, data: { limit: 3, open: 3 } } });
    expect(upstreamInitializeCount()).toBe(before);

    const upstreamSessionId = await upstreamSessionOf(sessions[0]!);
    expect((await sessions[0]!.delete()).status).toBe(200);
    await pollUntil(async () => upstreamDeletes(upstreamSessionId), (count) => count === 1, { timeoutMs: 5_000 });
    const again = await LegacySession.open(url);
    await Promise.all([again, ...sessions.slice(1)].map((session) => session.delete()));
  });

  it('closes the upstream session of a shim session that expired idle, frees its place, and leaves a session in use alone', async () => {
    const shim: ShimProcess = await stack.startShim({
      store,
      // Its own keys: the sessions of this test count apart from the other shim's.
      env: { SHIM_SESSION_IDLE_TTL_MS: '1000', SHIM_REDIS_PREFIX: `mts-idle-${store}` },
    });
    const [busy, idle, third] = await Promise.all([1, 2, 3].map(() => LegacySession.open(shim.url)));
    const busyUpstream = await upstreamSessionOf(busy!);
    const idleUpstream = await upstreamSessionOf(idle!);
    const thirdUpstream = await upstreamSessionOf(third!);

    // The busy session makes a request every 200 ms, well inside its 1 s idle TTL, until the others are closed.
    await pollUntil(
      async () => {
        expect((await busy!.post({ jsonrpc: '2.0', id: randomUUID(), method: 'ping' })).status).toBe(200);
        return upstreamDeletes(idleUpstream) + upstreamDeletes(thirdUpstream);
      },
      (closed) => closed === 2,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(upstreamDeletes(busyUpstream)).toBe(0);
    expect((await idle!.post({ jsonrpc: '2.0', id: 'late', method: 'ping' })).status).toBe(404);

    // Two places are free again; the busy session still holds the third.
    const opened = await Promise.all([1, 2].map(() => LegacySession.open(shim.url)));
    expect((await initialize(shim.url)).status).toBe(429);

    // Left alone, the busy session lapses too, and its upstream session is closed.
    await pollUntil(async () => upstreamDeletes(busyUpstream), (count) => count === 1, { timeoutMs: 10_000, intervalMs: 100 });
    await Promise.all(opened.map((session) => session.delete()));
  }, 30_000);
});
