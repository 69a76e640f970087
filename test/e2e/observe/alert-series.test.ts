import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

/** A TTL just above the least the stuck-task watch takes (twice its 10 s margin). */
const SHORT_TTL_MS = 21_000;
const SUNSET = '2027-06-30';

let redis: RedisServer;
let upstream: DemoUpstreamProcess;
let shim: ShimProcess;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedis(), spawnDemoUpstream(['--port', '0'])]);
  shim = await startShimProcess({
    upstreamUrl: upstream.url,
    redisUrl: redis.url,
    args: ['--max-open-tasks', '5', '--max-sessions', '3'],
    env: { SHIM_DEFAULT_TTL_MS: String(SHORT_TTL_MS), SHIM_LEGACY_SUNSET: SUNSET },
  });
});

afterAll(async () => {
  await shim?.stop();
  upstream?.killGroup();
  await redis?.stop();
});

/** The value of one sample of /metrics, by name and a label subset; undefined when absent. */
async function sample(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(`${shim.baseUrl}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe('the series the alerting rules read, from a running shim (prometheus/mcp-tasks-shim.rules.yml)', () => {
  it('reports the per-principal limits and how much the fullest principal holds, up to a refusal at the limit', async () => {
    expect(await sample('mcp_shim_principal_limit', { kind: 'tasks' })).toBe(5);
    expect(await sample('mcp_shim_principal_limit', { kind: 'sessions' })).toBe(3);
    expect(await sample('mcp_shim_principal_limit', { kind: 'streams' })).toBe(1000);
    expect(await sample('mcp_shim_principal_open_max', { kind: 'tasks' })).toBe(0);

    const client = new Sep2663Client(shim.url);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.createTask('slow_compute', { seconds: 60 })).taskId as string);
    expect(await sample('mcp_shim_principal_open_max', { kind: 'tasks' })).toBe(3);
    const sessions = [await LegacySession.open(shim.url), await LegacySession.open(shim.url)];
    expect(await sample('mcp_shim_principal_open_max', { kind: 'sessions' })).toBe(2);

    // Full: two more are admitted, the next is refused, and the count stays at the limit.
    for (let i = 0; i < 2; i++) ids.push((await client.createTask('slow_compute', { seconds: 60 })).taskId as string);
    expect((await client.request('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).body.error.code).toBe(-32012);
    expect(await sample('mcp_shim_principal_open_max', { kind: 'tasks' })).toBe(5);

    for (const taskId of ids) await client.cancelTask(taskId);
    for (const session of sessions) await session.delete();
  });

  it('counts a task still working shortly before its TTL ends as stuck, by wire, and one that finished not', async () => {
    const client = new Sep2663Client(shim.url);
    const legacy = await LegacySession.open(shim.url);
    expect(await sample('mcp_shim_tasks_stuck_total', { wire: 'sep2663' })).toBe(0);
    const stuck = [(await client.createTask('slow_compute', { seconds: 60 })).taskId as string];
    stuck.push((await legacy.result('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).task.taskId as string);
    const finished = (await client.createTask('slow_compute', { seconds: 2 })).taskId as string;
    await client.waitForStatus(finished, 'completed');

    // Read 8–10 s before the TTL ends, every 2 s.
    const counted = await pollUntil(
      async () => [await sample('mcp_shim_tasks_stuck_total', { wire: 'sep2663' }), await sample('mcp_shim_tasks_stuck_total', { wire: 'mcp-2025-11-25' })],
      ([modern, old]) => modern === 1 && old === 1,
      { timeoutMs: SHORT_TTL_MS, intervalMs: 250 },
    );
    expect(counted).toEqual([1, 1]);
    expect(await sample('mcp_shim_tasks_stuck_total', { wire: 'tasks-create' })).toBe(0);
    await client.cancelTask(stuck[0]!);
    await legacy.result('tasks/cancel', { taskId: stuck[1] });
    await legacy.delete();
  }, 40_000);

  it('gives the configured sunset of the old API in Unix seconds', async () => {
    expect(await sample('mcp_shim_legacy_sunset_timestamp_seconds')).toBe(Date.parse(`${SUNSET}T00:00:00Z`) / 1000);
  });

  it('exports every series the shipped rules read', async () => {
    const rules = readFileSync(fileURLToPath(new URL('../../../prometheus/mcp-tasks-shim.rules.yml', import.meta.url)), 'utf8');
    const read = new Set(rules.match(/\bmcp_shim_\w+/g));
    const text = await (await fetch(`${shim.baseUrl}/metrics`)).text();
    const exported = new Set([...text.matchAll(/^# TYPE (\w+) /gm)].map((m) => m[1]));
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
    expect(read.size).toBeGreaterThanOrEqual(10);
  });

  it('reads the store and the upstream as up, and each as down once it stops answering', async () => {
    expect(await sample('mcp_shim_dependency_up', { dependency: 'store' })).toBe(1);
    expect(await sample('mcp_shim_dependency_up', { dependency: 'upstream' })).toBe(1);
    expect(await sample('mcp_shim_stream_refusals_total')).toBe(0);

    await redis.halt();
    await pollUntil(() => sample('mcp_shim_dependency_up', { dependency: 'store' }), (up) => up === 0, { timeoutMs: 10_000, intervalMs: 100 });
    expect(await sample('mcp_shim_dependency_up', { dependency: 'upstream' })).toBe(1);

    upstream.killGroup();
    await upstream.exited;
    await pollUntil(() => sample('mcp_shim_dependency_up', { dependency: 'upstream' }), (up) => up === 0, { timeoutMs: 10_000, intervalMs: 100 });
  }, 30_000);
});
