import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../../src/demo-upstream/server.js';
import { connectDemoClient } from '../support/demo-upstream-client.js';

let upstream: DemoUpstream;
let client: Client;

beforeAll(async () => {
  upstream = await startDemoUpstream();
  client = await connectDemoClient(upstream.url);
});

afterAll(async () => {
  await client?.close();
  await upstream?.close();
});

function signal(): { fired: Promise<void>; fire: () => void } {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}

/**
 * Starts a call, waits until the server is visibly working on it (first progress, or a
 * question), aborts it from the client, and returns how long the server took to stop.
 */
async function msToStopAfterAbort(name: string, args: Record<string, unknown>, started = signal()): Promise<number> {
  const controller = new AbortController();
  const call = client.callTool({ name, arguments: args }, undefined, { signal: controller.signal, onprogress: started.fire });
  await started.fired;
  expect(upstream.activeToolCalls()).toBe(1);
  const abortedAt = Date.now();
  controller.abort();
  await expect(call).rejects.toThrow();
  await vi.waitFor(() => expect(upstream.activeToolCalls()).toBe(0), { timeout: 1_000, interval: 10 });
  return Date.now() - abortedAt;
}

describe('cancelling a call', () => {
  it('stops slow_compute within a second of the abort', async () => {
    expect(await msToStopAfterAbort('slow_compute', { seconds: 30 })).toBeLessThan(1_000);
  });

  it('stops run_ci_pipeline within a second of the abort', async () => {
    expect(await msToStopAfterAbort('run_ci_pipeline', { commit: 'abc123' })).toBeLessThan(1_000);
  });

  it('stops waiting for an answer when the call is aborted', async () => {
    const asked = signal();
    // Never answers: only the abort can end the server's wait.
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked.fire();
      return new Promise(() => undefined);
    });
    expect(await msToStopAfterAbort('confirm_delete', { filename: 'a.txt' }, asked)).toBeLessThan(1_000);
  });

  it('keeps serving the session after a cancelled call', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'again' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, again!' }]);
  });
});
