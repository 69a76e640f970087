import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startHostileUpstream, type HostileUpstream, type HostileUpstreamOptions } from '../../fixtures/hostile-upstream.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

/**
 * The upstream is untrusted input too (docs/security.md, "Bounds"): a replica in front of an
 * upstream that attacks it keeps answering /healthz within a second, keeps its memory, and serves
 * an honest call, while the attack fails with an error that names it.
 */
const HEALTH_MS = 1_000;
const POLICY = { tools: { honest: 'forbidden', huge: 'forbidden', flood: 'forbidden', huge_task: 'required' } };

let upstream: HostileUpstream | undefined;
let shim: ShimProcess | undefined;
afterEach(async () => {
  await shim?.stop();
  await upstream?.close();
  shim = undefined;
  upstream = undefined;
});

async function stack(options: HostileUpstreamOptions): Promise<{ shim: ShimProcess; upstream: HostileUpstream; client: Sep2663Client }> {
  upstream = await startHostileUpstream(options);
  shim = await startShimProcess({ upstreamUrl: upstream.url, policy: POLICY, args: ['--upstream-protocol', options.era === '2026' ? '2026-07-28' : '2025-11-25'] });
  return { shim, upstream, client: new Sep2663Client(shim.url) };
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** /healthz, timed, every 100 ms while `attack` runs; the slowest answer. */
async function healthWhile(target: ShimProcess, attack: Promise<unknown>): Promise<number> {
  let slowest = 0;
  let done = false;
  void attack.finally(() => (done = true));
  while (!done) {
    const started = performance.now();
    const res = await fetch(`${target.baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    slowest = Math.max(slowest, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return slowest;
}

async function honestCall(client: Sep2663Client): Promise<void> {
  expect(textOf(await client.result('tools/call', { name: 'honest', arguments: {} }))).toBe('honest answer to honest');
}

describe('a replica in front of a hostile upstream', () => {
  it.each(['2025', '2026'] as const)('stops reading an endless tools/list (%s) at its bounds and keeps serving', async (era) => {
    const { shim, upstream, client } = await stack({ mode: 'endless-list', era });
    const before = rssMiB(shim.pid);
    // Each made-up name asks the catalog to refresh (at most once a second): every refresh is one bounded listing.
    const misses = Promise.all(Array.from({ length: 4 }, async (_, i) => {
      await client.request('tools/call', { name: `made-up-${i}`, arguments: {} });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    }));
    expect(await healthWhile(shim, misses)).toBeLessThan(HEALTH_MS);
    await honestCall(client);
    // A listing stops past 10,000 tools (11 pages of 1,000); a few listings ran, none went on.
    expect(upstream.listPages()).toBeLessThanOrEqual(11 * 8);
    expect(rssMiB(shim.pid) - before).toBeLessThan(100);
  });

  it('refuses a 100 MB result with an error that names the upstream, as a call and as a task', { timeout: 60_000 }, async () => {
    const { shim, client } = await stack({ mode: 'huge-result', era: '2025' });
    const before = rssMiB(shim.pid);
    const calls = Promise.all(Array.from({ length: 4 }, () => client.request('tools/call', { name: 'huge', arguments: {} })));
    expect(await healthWhile(shim, calls)).toBeLessThan(HEALTH_MS);
    for (const reply of await calls) {
      expect(reply.body.error).toMatchObject({ code: -32603 });
      expect(reply.body.error.message).toMatch(/has a message larger than 16777216 bytes/);
    }
    expect(rssMiB(shim.pid) - before).toBeLessThan(200);
    const task = await client.createTask('huge_task', {});
    const ended = await client.waitForStatus(task.taskId, ['completed', 'failed'], { timeoutMs: 30_000 });
    expect(ended.status).toBe('failed');
    expect(ended.error.message).toMatch(/has a message larger than 16777216 bytes/);
    await honestCall(client);
  });

  it.each(['2025', '2026'] as const)('reads 15 MB of progress before six answers (%s) without stalling the replica', { timeout: 60_000 }, async (era) => {
    const { shim, client } = await stack({ mode: 'progress-flood', era });
    const calls = Promise.all(Array.from({ length: 6 }, () => client.result('tools/call', { name: 'flood', arguments: {} })));
    expect(await healthWhile(shim, calls)).toBeLessThan(HEALTH_MS);
    expect((await calls).map(textOf)).toEqual(Array(6).fill('flood done'));
    await honestCall(client);
  });
});
