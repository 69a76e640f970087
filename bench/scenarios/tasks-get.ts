/** tasks/get throughput and latency on Redis vs the SDK's in-memory task server and bare node+redis. */
import { compare } from '../lib/compare.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { legacy, mustResult, openLegacySession, sep2663 } from '../lib/mcp.js';
import { runOpenLoop, type OpenLoopResult } from '../lib/open-loop.js';
import { sleep } from '../lib/proc.js';
import { median, ratio, round } from '../lib/stats.js';
import { figureTarget, ratioTarget } from '../lib/target.js';

export async function tasksGet(ctx: BenchContext): Promise<ScenarioResult> {
  const created = await mustResult(ctx.shim.url, sep2663('tools/call', { name: 'greet', arguments: { name: 'bench' } }));
  for (let i = 0; i < 100; i++) {
    const t = await mustResult(ctx.shim.url, sep2663('tasks/get', { taskId: created.taskId }));
    if (t.status === 'completed') break;
    await sleep(50);
  }
  const session = await openLegacySession(ctx.sdk.url, { tasks: {} });
  const sdkTask = await mustResult(ctx.sdk.url, legacy('tools/call', { name: 'greet', arguments: { name: 'bench' }, task: { ttl: 3_600_000 } }, session));
  await mustResult(ctx.sdk.url, legacy('tasks/get', { taskId: sdkTask.task.taskId }, session));

  const shimReq = sep2663('tasks/get', { taskId: created.taskId });
  const sdkReq = legacy('tasks/get', { taskId: sdkTask.task.taskId }, session);
  const base = { connections: ctx.connections, durationS: ctx.durationS };
  const variants = [
    { name: 'shim (Redis)', spec: { ...base, url: ctx.shim.url, headers: shimReq.headers, body: shimReq.body } },
    { name: 'SDK in-memory task server', spec: { ...base, url: ctx.sdk.url, headers: sdkReq.headers, body: sdkReq.body } },
    { name: 'bare node:http + 1 Redis GET', spec: { ...base, url: `${ctx.bare.url}/get`, headers: { 'content-type': 'application/json' }, body: shimReq.body } },
  ];
  const peak = await compare(variants, { rounds: ctx.rounds, warmupS: 2, log: ctx.log });

  // Latency at half of each server's own peak: an open loop (constant arrival rate, timed from
  // each request's due time), rounds interleaved like the peak's.
  const halfRuns: Record<string, OpenLoopResult[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < ctx.rounds; r++) {
    for (const v of variants) {
      const rate = Math.max(1, Math.round(peak[v.name]!.rps / 2));
      const run = await runOpenLoop({ ...v.spec, rate, warmupS: 1 });
      const bad = run.non2xx + run.errors + run.timeouts;
      ctx.log(
        `    half load round ${r + 1} ${v.name}: ${rate} req/s offered, ${run.rps} served, p50 ${run.p50} ms p99 ${run.p99} ms max ${run.max} ms (${run.queued} queued, send lag p99 ${run.sendLagP99} ms)${bad ? ` (${bad} failed)` : ''}`,
      );
      halfRuns[v.name]!.push(run);
    }
  }
  const half: Record<string, { p50: number; p99: number; rate: number; rps: number; runs: OpenLoopResult[] }> = Object.fromEntries(
    variants.map((v) => {
      const runs = halfRuns[v.name]!;
      const rate = Math.max(1, Math.round(peak[v.name]!.rps / 2));
      return [v.name, { p50: round(median(runs.map((x) => x.p50)), 2), p99: round(median(runs.map((x) => x.p99)), 2), rate, rps: median(runs.map((x) => x.rps)), runs }];
    }),
  );
  const shim = peak['shim (Redis)']!;
  const sdk = peak['SDK in-memory task server']!;
  const bare = peak['bare node:http + 1 Redis GET']!;
  const shimHalf = half['shim (Redis)']!;
  return {
    name: 'tasks-get',
    title: 'tasks/get throughput and latency',
    rows: variants.map((v) => ({
      variant: v.name,
      'req/s (median)': peak[v.name]!.rps,
      'p50 ms': peak[v.name]!.p50,
      'p99 ms': peak[v.name]!.p99,
      'p50 ms @ half peak': half[v.name]!.p50,
      'p99 ms @ half peak': half[v.name]!.p99,
      'shim ÷ this': v.name.startsWith('shim') ? '—' : ratio(shim.rps, peak[v.name]!.rps),
    })),
    targets: [
      ratioTarget('tasks/get ≥ 1.0× SDK in-memory server', ratio(shim.rps, sdk.rps), 1),
      ratioTarget('tasks/get ≥ 0.7× bare node+redis', ratio(shim.rps, bare.rps), 0.7),
      figureTarget('tasks/get p99 < 5 ms at half of peak', `${shimHalf.p99} ms @ ${shimHalf.rate} req/s`, { value: shimHalf.p99, under: 5 }),
    ],
    notes: [
      `${ctx.connections} connections, ${ctx.durationS} s per round, ${ctx.rounds} rounds; one completed task polled repeatedly.`,
      'Peak: autocannon, closed loop (each connection sends its next request when the answer arrives).',
      `At half peak: an open loop (bench/lib/open-loop.ts) at half of each variant's own median peak: request i is due at i / rate, goes out on an idle keep-alive connection of ${ctx.connections} (or waits for the first to free up), and its latency runs from its due time, so queueing behind a stall counts; exact percentiles of all requests of a ${ctx.durationS} s window after 1 s of warm-up, medians of ${ctx.rounds} interleaved rounds. (autocannon's overallRate sent each connection's per-second quota back to back and added synthetic samples.)`,
    ],
    raw: { peak, half },
  };
}
