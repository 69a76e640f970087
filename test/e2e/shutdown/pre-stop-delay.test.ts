import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { Sep2663Client } from '../../support/sep2663-client.js';

const stack = useStack({ stores: [] });

type Status = number | 'refused';
type Probe = { at: number; ready: Status; mcp: Status; legacy: Status };

async function statusOf(request: () => Promise<Response>): Promise<number | 'refused'> {
  try {
    const res = await request();
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'refused';
  }
}

describe('the pre-stop delay on SIGTERM', () => {
  it('answers 503 on /readyz for --shutdown-delay-ms while /mcp still answers, ignores SIGHUP meanwhile, then stops', async () => {
    const delayMs = 2_000;
    const shim = await stack.startShim({ store: 'embedded', env: { SHIM_SHUTDOWN_DELAY_MS: String(delayMs) } });
    const client = new Sep2663Client(shim.url);
    const session = await LegacySession.open(shim.url);
    expect(await statusOf(() => fetch(`${shim.baseUrl}/readyz`))).toBe(200);

    const signalledAt = Date.now();
    shim.signal('SIGTERM');
    const probes: Probe[] = [];
    // A balancer's health check and a client that keeps sending: each on a fresh connection, as a new client would.
    for (let i = 0; i < 200 && Date.now() - signalledAt < delayMs + 10_000; i++) {
      const [ready, mcp, legacy] = await Promise.all([
        statusOf(() => fetch(`${shim.baseUrl}/readyz`, { headers: { connection: 'close' } })),
        statusOf(() => client.request('ping').then((reply) => new Response(null, { status: reply.status }))),
        statusOf(() => session.post({ jsonrpc: '2.0', id: i, method: 'ping' }).then((reply) => new Response(null, { status: reply.status }))),
      ]);
      probes.push({ at: Date.now() - signalledAt, ready, mcp, legacy });
      if (ready === 'refused') break;
      // A reload asked for during the shutdown changes nothing and ends nothing.
      if (ready === 503 && probes.filter((p) => p.ready === 503).length === 1) shim.signal('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The signal reaches the process a moment after it is sent: the delay runs from the first 503.
    const first = probes.findIndex((p) => p.ready === 503);
    const last = probes.findIndex((p) => p.ready === 'refused');
    expect(first).toBeGreaterThanOrEqual(0);
    expect(last).toBeGreaterThan(first);
    const during = probes.slice(first, last);
    expect(during.length).toBeGreaterThan(5);
    expect(during.filter((p) => p.ready !== 503 || p.mcp !== 200 || p.legacy !== 200)).toEqual([]);
    expect(probes.slice(0, first).every((p) => p.ready === 200)).toBe(true);
    // Then the graceful stop closes the listener, no earlier than the delay after the first 503.
    expect((probes[last] as Probe).at - (probes[first] as Probe).at).toBeGreaterThanOrEqual(delayMs - 300);
    expect(await shim.exited).toEqual({ code: 0, signal: null });
    expect(shim.stderr()).toMatch(/SIGTERM: shutting down \(\/readyz 503 for 2000 ms first, grace 25000 ms/);
    expect(shim.stderr()).toContain('SIGHUP: shutting down, not reloaded');
  });
});
