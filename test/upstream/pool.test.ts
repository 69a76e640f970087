import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { UpstreamPool } from '../../src/upstream/pool.js';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';

let upstream: DemoUpstreamProcess;

beforeAll(async () => {
  upstream = await spawnDemoUpstream(['--port', '0']);
}, 30_000);

afterAll(async () => {
  upstream?.killGroup();
  await upstream?.exited;
});

interface Gate {
  url: string;
  /** `initialize` requests that reached the gate, and the most that were in flight at once. */
  initializes: number;
  maxOpening: number;
  toolCalls: number;
  close(): Promise<void>;
}

/**
 * A proxy in front of the demo upstream that holds each `initialize` for `holdMs` (so that
 * overlapping session openings show) and resets the connection of the first `resets` of them.
 */
async function startGate(target: string, opts: { holdMs?: number; resets?: number } = {}): Promise<Gate> {
  const to = new URL(target);
  let opening = 0;
  const gate: Gate = { url: '', initializes: 0, maxOpening: 0, toolCalls: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = body.length ? (JSON.parse(body.toString()) as { method?: string }).method : undefined;
      const forward = (): void => {
        const out = request({ host: to.hostname, port: to.port, path: to.pathname, method: req.method, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          up.on('end', () => {
            if (method === 'initialize') opening--;
          });
        });
        out.end(body);
      };
      if (method === 'tools/call') gate.toolCalls++;
      if (method !== 'initialize') return forward();
      gate.initializes++;
      if (gate.initializes <= (opts.resets ?? 0)) {
        req.socket.destroy();
        return;
      }
      opening++;
      gate.maxOpening = Math.max(gate.maxOpening, opening);
      setTimeout(forward, opts.holdMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gate.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  gate.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return gate;
}

const clientInfo = { name: 'pool-test', version: '1.0.0' };
const greet = (pool: UpstreamPool, name: string) => pool.callTool('greet', { name }, { timeoutMs: 10_000 });

/** A pool whose upstream is the demo behind a gate; both are closed after `fn`. */
async function throughGate(gateOptions: Parameters<typeof startGate>[1], maxConnecting: number | undefined, fn: (pool: UpstreamPool, gate: Gate) => Promise<void>): Promise<void> {
  const gate = await startGate(upstream.url, gateOptions);
  const pool = new UpstreamPool({ url: gate.url, clientInfo, maxConnecting });
  try {
    await fn(pool, gate);
  } finally {
    await pool.close();
    await gate.close();
  }
}

describe('UpstreamPool', () => {
  it('opens at most maxConnecting upstream sessions at once when a burst of calls arrives, and every call is answered', async () => {
    await throughGate({ holdMs: 60 }, 3, async (pool, gate) => {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => greet(pool, `n${i}`)));
      expect(results.map((r) => (r.content as Array<{ text: string }>)[0]!.text)).toEqual(Array.from({ length: 12 }, (_, i) => `Hello, n${i}!`));
      expect(gate.maxOpening).toBeLessThanOrEqual(3);
      expect(gate.maxOpening).toBeGreaterThanOrEqual(2);
      expect(gate.toolCalls).toBe(12);
    });
  });

  it('opens the session again when its connection is reset before any tool call was sent', async () => {
    await throughGate({ resets: 2 }, undefined, async (pool, gate) => {
      const result = await greet(pool, 'again');
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe('Hello, again!');
      expect(gate.initializes).toBe(3);
      expect(gate.toolCalls).toBe(1);
    });
  });

  it('gives up with a retryable unavailable error after three failed openings, and never sends the tool call', async () => {
    await throughGate({ resets: 100 }, undefined, async (pool, gate) => {
      const error = await greet(pool, 'never').catch((err: unknown) => err);
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).toJsonRpc()).toMatchObject({ code: -32603, data: { retryable: true } });
      expect(gate.initializes).toBe(3);
      expect(gate.toolCalls).toBe(0);
    });
  });
});
