import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { UpstreamRpc } from '../../src/upstream/client/rpc-client.js';
import { SessionPool } from '../../src/upstream/client/session-pool.js';
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
  /** The capabilities each `initialize` declared. */
  declared: Array<Record<string, unknown>>;
  /** Answer the next tool call of a known session with 404, as an upstream that restarted does. */
  forgetOnce: boolean;
  close(): Promise<void>;
}

/**
 * A proxy in front of the demo upstream that holds each `initialize` for `holdMs` (so that
 * overlapping session openings show) and resets the connection of the first `resets` of them.
 */
async function startGate(target: string, opts: { holdMs?: number; resets?: number } = {}): Promise<Gate> {
  const to = new URL(target);
  let opening = 0;
  const gate: Gate = { url: '', initializes: 0, maxOpening: 0, toolCalls: 0, declared: [], forgetOnce: false, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const message = body.length ? (JSON.parse(body.toString()) as { method?: string; params?: { capabilities?: Record<string, unknown> } }) : undefined;
      const method = message?.method;
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
      if (method === 'tools/call' && gate.forgetOnce) {
        gate.forgetOnce = false;
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      if (method === 'tools/call') gate.toolCalls++;
      if (method !== 'initialize') return forward();
      gate.initializes++;
      gate.declared.push(message?.params?.capabilities ?? {});
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
/** A call that could answer input (a held session of its own); `greet` never asks. */
const greet = (pool: SessionPool, name: string) => pool.callTool('greet', { name }, { timeoutMs: 10_000, onInput: async () => ({}) });
/** A call that takes no input (the shared session). */
const plainGreet = (pool: SessionPool, name: string) => pool.callTool('greet', { name }, { timeoutMs: 10_000 });
const textOf = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>)[0]!.text;

/** A pool whose upstream is the demo behind a gate; both are closed after `fn`. */
async function throughGate(gateOptions: Parameters<typeof startGate>[1], maxConnecting: number | undefined, fn: (pool: SessionPool, gate: Gate) => Promise<void>): Promise<void> {
  const gate = await startGate(upstream.url, gateOptions);
  const rpc = new UpstreamRpc({ url: gate.url });
  const pool = new SessionPool(rpc, { clientInfo, maxConnecting });
  try {
    await fn(pool, gate);
  } finally {
    await pool.close();
    await rpc.close();
    await gate.close();
  }
}

describe('SessionPool', () => {
  it('carries concurrent calls that take no input on one session that declares no client capability', async () => {
    await throughGate({ holdMs: 60 }, 3, async (pool, gate) => {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => plainGreet(pool, `n${i}`)));
      expect(results.map(textOf)).toEqual(Array.from({ length: 12 }, (_, i) => `Hello, n${i}!`));
      expect(gate.initializes).toBe(1);
      expect(gate.declared).toEqual([{}]);
      expect(gate.toolCalls).toBe(12);
    });
  });

  it('opens at most maxConnecting held sessions at once when a burst of calls that take input arrives, and every call is answered', async () => {
    await throughGate({ holdMs: 60 }, 3, async (pool, gate) => {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => greet(pool, `n${i}`)));
      expect(results.map(textOf)).toEqual(Array.from({ length: 12 }, (_, i) => `Hello, n${i}!`));
      expect(gate.declared.every((declared) => 'elicitation' in declared && 'sampling' in declared && 'roots' in declared)).toBe(true);
      expect(gate.maxOpening).toBeLessThanOrEqual(3);
      expect(gate.maxOpening).toBeGreaterThanOrEqual(2);
      expect(gate.toolCalls).toBe(12);
    });
  });

  it('opens the session again when its connection is reset before any tool call was sent', async () => {
    await throughGate({ resets: 2 }, undefined, async (pool, gate) => {
      const result = await greet(pool, 'again');
      expect(textOf(result)).toBe('Hello, again!');
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

  it('opens a new session when the upstream forgot the shared one, and sends the call once more', async () => {
    await throughGate({}, undefined, async (pool, gate) => {
      expect(textOf(await plainGreet(pool, 'first'))).toBe('Hello, first!');
      gate.forgetOnce = true;
      expect(textOf(await plainGreet(pool, 'second'))).toBe('Hello, second!');
      expect(gate.initializes).toBe(2);
      expect(gate.toolCalls).toBe(2);
    });
  });

  it('opens a new held session when the upstream forgot an idle one, and sends the call once more', async () => {
    await throughGate({}, undefined, async (pool, gate) => {
      expect(textOf(await greet(pool, 'first'))).toBe('Hello, first!');
      gate.forgetOnce = true;
      expect(textOf(await greet(pool, 'second'))).toBe('Hello, second!');
      expect(gate.initializes).toBe(2);
      expect(gate.toolCalls).toBe(2);
    });
  });
});
