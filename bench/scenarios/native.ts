/**
 * A 2025-11-25 task upstream behind the shim (native execution, src/demo-native-upstream/): tasks/get
 * of a mirrored task vs bare node+Redis, the upstream requests one mirrored task costs while 1,000
 * clients poll it, and task creation through the shim vs the same client calling the upstream.
 */
import { pollTask } from '../../test/support/pollers.js';
import { compare } from '../lib/compare.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { get } from '../lib/http.js';
import { legacy, mustResult, openLegacySession, sep2663 } from '../lib/mcp.js';
import { runOpenLoop, type OpenLoopResult } from '../lib/open-loop.js';
import { sleep, spawnServer, type Served } from '../lib/proc.js';
import { queueDepth, startShim } from '../lib/servers.js';
import { median, ratio, round } from '../lib/stats.js';
import { ratioTarget } from '../lib/target.js';

/** Its own queue and keys: the main shim's worker must not take jobs meant for another upstream. */
const NATIVE_PREFIX = 'mts-bench-native';
const UPSTREAM_POLL_MS = 500;
const POLLERS = 1_000;
const POLLER_INTERVAL_MS = 1_000;
const POLLED_TASK_S = 10;
const CREATE_RATE = 10;
const CREATE_CONNECTIONS = 8;
const DRAIN_MAX_MS = 120_000;
const MIRRORED_ROW = 'shim, mirrored native task (Redis)';
const BARE_ROW = 'bare node:http + 1 Redis GET';
const VIA_SHIM_ROW = 'legacy client → shim → task upstream (Redis)';
const DIRECT_ROW = 'legacy client → task upstream directly';

interface UpstreamStats {
  requests: Record<string, number>;
  tasks: Array<{ createdAt: string; lastUpdatedAt: string; arguments?: Record<string, unknown> }>;
}

export async function native(ctx: BenchContext): Promise<ScenarioResult> {
  // Quiet: the upstream sends no status notifications, so the mirror's own tasks/get are what it costs.
  const upstream = await spawnServer('demo native upstream', ['--import', 'tsx', 'src/demo-native-upstream/main.ts', '--port', '0', '--quiet', '--poll-interval-ms', String(UPSTREAM_POLL_MS)], {
    ready: /demo native upstream listening on (\S+)/,
  });
  let shim: Served | undefined;
  try {
    shim = await startShim({ upstream: upstream.url, redis: ctx.redis.url, policy: ctx.policy, env: { SHIM_REDIS_PREFIX: NATIVE_PREFIX, SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: '1000000' } });
    const stats = async (): Promise<UpstreamStats> => JSON.parse((await get(new URL('/stats', upstream.url).href)).text) as UpstreamStats;
    const polled = await mirroredGet(ctx, shim);
    const mirror = await upstreamCostOfPolling(ctx, shim, stats);
    const creation = await creationLatency(ctx, shim, upstream);
    const mirrored = polled[MIRRORED_ROW]!;
    const bare = polled[BARE_ROW]!;
    const viaShim = creation[VIA_SHIM_ROW]!;
    const direct = creation[DIRECT_ROW]!;
    return {
      name: 'native',
      title: 'A 2025-11-25 task upstream behind the shim (native execution)',
      rows: [
        ...[MIRRORED_ROW, BARE_ROW].map((variant) => ({
          variant: `tasks/get: ${variant}`,
          'req/s (median)': polled[variant]!.rps,
          'p50 ms': polled[variant]!.p50,
          'p99 ms': polled[variant]!.p99,
        })),
        ...[VIA_SHIM_ROW, DIRECT_ROW].map((variant) => ({
          variant: `create at ${CREATE_RATE}/s: ${variant}`,
          'req/s (median)': creation[variant]!.rps,
          'p50 ms': creation[variant]!.p50,
          'p99 ms': creation[variant]!.p99,
        })),
      ],
      targets: [
        ratioTarget('tasks/get of a mirrored task ≥ 0.7× bare node+redis', ratio(mirrored.rps, bare.rps), 0.7),
        {
          target: `upstream requests per mirrored task per pollInterval, ${POLLERS} clients polling: exactly 1`,
          value: `${mirror.perInterval} (${mirror.upstreamGets} tasks/get in ${mirror.intervals} intervals; ${mirror.clientPolls} client polls)`,
          pass: mirror.upstreamGets <= Math.ceil(mirror.intervals) + 1 && mirror.perInterval >= 0.8,
        },
        {
          target: `(info) task creation through the shim vs the upstream directly, p50 / p99 at ${CREATE_RATE}/s`,
          value: `${viaShim.p50} / ${viaShim.p99} ms vs ${direct.p50} / ${direct.p99} ms`,
          pass: null,
        },
      ],
      notes: [
        `The upstream: src/demo-native-upstream (the official SDK's registerToolTask and InMemoryTaskStore) with --quiet (no notifications/tasks/status, so the mirror polls tasks/get) and a pollInterval of ${UPSTREAM_POLL_MS} ms; its own request counts (GET /stats) are what the mirror cost. The shim runs against it with its own Redis prefix (${NATIVE_PREFIX}).`,
        `tasks/get: one running native_work task, mirrored by the shim's worker while ${ctx.connections} connections poll it (autocannon, ${ctx.rounds} interleaved rounds of ${ctx.durationS} s) next to the bare handler of the tasks-get scenario.`,
        `Upstream requests: ${POLLERS} SEP-2663 clients, each on a keep-alive connection of its own, poll one ${POLLED_TASK_S} s native_work task every ${POLLER_INTERVAL_MS} ms until it ends; intervals = the upstream task's life (its createdAt to its lastUpdatedAt, as the upstream recorded them) ÷ ${UPSTREAM_POLL_MS} ms. The upstream also receives the session's initialize, tools/call and tasks/result, once per task.`,
        `Creation: a 2025-11-25 client's task-augmented tools/call of native_quick (a 100 ms task) in one session, at ${CREATE_RATE}/s (a rate the shim's worker, which opens an upstream session per task on the same two cores, keeps up with) from an open loop on ${CREATE_CONNECTIONS} connections (latency from each request's due time), through the shim and to the upstream directly, ${ctx.rounds} interleaved rounds of ${ctx.durationS} s. Through the shim the CreateTaskResult answers once the task is durable and queued; a worker then creates the upstream task (the queue is drained between rounds).`,
      ],
      raw: { polled, mirror, creation },
    };
  } finally {
    await shim?.stop();
    await upstream.stop();
  }
}

async function mirroredGet(ctx: BenchContext, shim: Served): Promise<Awaited<ReturnType<typeof compare>>> {
  const created = await mustResult(shim.url, sep2663('tools/call', { name: 'native_work', arguments: { seconds: 3_600, label: 'bench-mirrored' } }));
  if (created.resultType !== 'task') throw new Error(`native_work did not create a task: ${JSON.stringify(created)}`);
  await waitFor(shim.url, created.taskId, (t) => typeof t.statusMessage === 'string' && t.statusMessage.startsWith('Working bench-mirrored'));
  const getReq = sep2663('tasks/get', { taskId: created.taskId });
  const base = { connections: ctx.connections, durationS: ctx.durationS };
  try {
    return await compare(
      [
        { name: MIRRORED_ROW, spec: { ...base, url: shim.url, headers: getReq.headers, body: getReq.body } },
        { name: BARE_ROW, spec: { ...base, url: `${ctx.bare.url}/get`, headers: { 'content-type': 'application/json' }, body: getReq.body } },
      ],
      { rounds: ctx.rounds, warmupS: 2, log: ctx.log },
    );
  } finally {
    await mustResult(shim.url, sep2663('tasks/cancel', { taskId: created.taskId }));
    await waitFor(shim.url, created.taskId, (t) => t.status === 'cancelled');
  }
}

async function upstreamCostOfPolling(
  ctx: BenchContext,
  shim: Served,
  stats: () => Promise<UpstreamStats>,
): Promise<{ upstreamGets: number; intervals: number; perInterval: number; clientPolls: number }> {
  const before = (await stats()).requests['tasks/get'] ?? 0;
  const created = await mustResult(shim.url, sep2663('tools/call', { name: 'native_work', arguments: { seconds: POLLED_TASK_S, label: 'bench-polled' } }));
  const polled = await pollTask(shim.url, created.taskId, { clients: POLLERS, intervalMs: POLLER_INTERVAL_MS });
  if (polled.last.status !== 'completed') throw new Error(`the polled task ended ${polled.last.status}: ${JSON.stringify(polled.last)}`);
  const after = await stats();
  const upstreamGets = (after.requests['tasks/get'] ?? 0) - before;
  // The upstream task's life, as the upstream recorded it, is what the mirror had to follow.
  const task = after.tasks.find((t) => t.arguments?.label === 'bench-polled');
  if (!task) throw new Error('the upstream does not list the polled task');
  const intervals = round((Date.parse(task.lastUpdatedAt) - Date.parse(task.createdAt)) / UPSTREAM_POLL_MS, 1);
  const perInterval = round(upstreamGets / intervals, 2);
  ctx.log(`    ${POLLERS} pollers: ${polled.livePolls} polls of the running task, ${upstreamGets} upstream tasks/get in ${intervals} intervals (${perInterval} per interval)`);
  return { upstreamGets, intervals, perInterval, clientPolls: polled.livePolls };
}

async function creationLatency(ctx: BenchContext, shim: Served, upstream: Served): Promise<Record<string, { p50: number; p99: number; rps: number; runs: OpenLoopResult[] }>> {
  const call = { name: 'native_quick', arguments: { text: 'bench' }, task: { ttl: 60_000 } };
  const [viaShim, direct] = await Promise.all([openLegacySession(shim.url, {}), openLegacySession(upstream.url, {})]);
  const variants = [
    { name: VIA_SHIM_ROW, url: shim.url, req: legacy('tools/call', call, viaShim) },
    { name: DIRECT_ROW, url: upstream.url, req: legacy('tools/call', call, direct) },
  ];
  for (const v of variants) await mustResult(v.url, v.req);
  const runs: Record<string, OpenLoopResult[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < ctx.rounds; r++) {
    for (const v of variants) {
      await drain(shim.url);
      const run = await runOpenLoop({ url: v.url, headers: v.req.headers, body: v.req.body, rate: CREATE_RATE, connections: CREATE_CONNECTIONS, durationS: ctx.durationS, warmupS: 1 });
      const bad = run.non2xx + run.errors + run.timeouts;
      ctx.log(`    create round ${r + 1} ${v.name}: ${run.rps} served, p50 ${run.p50} ms p99 ${run.p99} ms${bad ? ` (${bad} failed)` : ''}`);
      runs[v.name]!.push(run);
    }
  }
  await drain(shim.url);
  return Object.fromEntries(
    variants.map((v) => {
      const rs = runs[v.name]!;
      return [v.name, { p50: round(median(rs.map((x) => x.p50)), 2), p99: round(median(rs.map((x) => x.p99)), 2), rps: median(rs.map((x) => x.rps)), runs: rs }];
    }),
  );
}

/** Waits until the shim's worker ran every queued task: nothing of one round runs in the next. */
async function drain(shimUrl: string): Promise<void> {
  const deadline = Date.now() + DRAIN_MAX_MS;
  while ((await queueDepth(shimUrl)) > 0) {
    if (Date.now() > deadline) throw new Error(`jobs still queued at ${shimUrl} after ${DRAIN_MAX_MS / 1000} s`);
    await sleep(200);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function waitFor(url: string, taskId: string, until: (task: any) => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const task = await mustResult(url, sep2663('tasks/get', { taskId }));
    if (until(task)) return;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach the expected state: ${JSON.stringify(task)}`);
    await sleep(100);
  }
}
