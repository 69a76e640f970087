import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { pollUntil } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES });

async function get(url: string): Promise<{ status: number; body: { status: string; checks?: Record<string, string> } }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as { status: string; checks?: Record<string, string> } };
}

// Runs in order: the last tests take the dependencies down.
describe('health endpoints', () => {
  it.each(STORES)('/healthz is 200 (%s store)', async (store) => {
    const reply = await get(`${stack.shim(store).baseUrl}/healthz`);
    expect(reply.status).toBe(200);
  });

  it.each(STORES)('/readyz is 200 when the store and the upstream are reachable (%s store)', async (store) => {
    const reply = await get(`${stack.shim(store).baseUrl}/readyz`);
    expect(reply.status).toBe(200);
    expect(reply.body.checks).toEqual({ store: 'ok', upstream: 'ok' });
  });

  it('keeps idle connections open longer than a load balancer does, and says so (Keep-Alive: timeout=65)', async () => {
    const res = await fetch(stack.shim('redis').url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    });
    await res.text();
    expect(res.headers.get('keep-alive')).toBe('timeout=65');
  });

  it('/readyz is 503 naming the store while Redis is down, and 200 again once it is back', async () => {
    const url = `${stack.shim('redis').baseUrl}/readyz`;
    await stack.redis.stop();
    const down = await pollUntil(() => get(url), (r) => r.status === 503, { timeoutMs: 5_000 });
    expect(down.body.checks).toMatchObject({ store: 'unreachable', upstream: 'ok' });
    expect((await get(`${stack.shim('redis').baseUrl}/healthz`)).status).toBe(200);
    await stack.redis.restart();
    await pollUntil(() => get(url), (r) => r.status === 200, { timeoutMs: 10_000, intervalMs: 100 });
    // The outage is reported through /readyz, not as a stack trace per reconnect attempt.
    expect(stack.shim('redis').stderr()).not.toMatch(/ECONNREFUSED|\n\s+at /);
  });

  it.each(STORES)('/readyz is 503 naming the upstream once the upstream process is stopped (%s store)', async (store) => {
    stack.upstream.killGroup();
    await stack.upstream.exited;
    const reply = await pollUntil(() => get(`${stack.shim(store).baseUrl}/readyz`), (r) => r.status === 503, { timeoutMs: 5_000 });
    expect(reply.body.checks).toMatchObject({ upstream: 'unreachable', store: 'ok' });
    expect((await get(`${stack.shim(store).baseUrl}/healthz`)).status).toBe(200);
  });
});
