/** Passthrough overhead: a non-task request (legacy `ping` in a session) through the shim vs direct vs a pipe proxy. */
import { compare } from '../lib/compare.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { untilIdle } from '../lib/cpu.js';
import { startShim } from '../lib/servers.js';
import { legacy, mustResult, openLegacySession } from '../lib/mcp.js';
import { medianOf, sequentialLatency, type LatencySample } from '../lib/latency.js';
import { ratio, round } from '../lib/stats.js';
import { figureTarget, ratioTarget } from '../lib/target.js';

/** Its own prefix: it digests no recorded week at start-up and shares no session with the main shim. */
const FRESH_PREFIX = 'mts-bench-fresh';

/**
 * The target is measured on the main shim, which has served every scenario before this one, as a
 * replica behind a load balancer serves all kinds of traffic. A replica started for this scenario,
 * which has forwarded nothing but these pings, is measured beside it (information, not the target):
 * the difference between the two is what the earlier task traffic left in the process
 * (docs/decisions/0012-benchmark-method.md), not the forwarding path.
 */
export async function passthrough(ctx: BenchContext): Promise<ScenarioResult> {
  const fresh = await startShim({ upstream: ctx.upstream.url, redis: ctx.redis.url, policy: ctx.policy, env: { SHIM_REDIS_PREFIX: FRESH_PREFIX } });
  try {
    await untilIdle(fresh.pid);
    return await measure(ctx, fresh.url);
  } finally {
    await fresh.stop();
  }
}

async function measure(ctx: BenchContext, freshUrl: string): Promise<ScenarioResult> {
  const targets = [
    { name: 'shim (legacy session → upstream)', url: ctx.shim.url },
    { name: 'direct to upstream', url: ctx.upstream.url },
    { name: 'node:http pipe proxy', url: ctx.pipe.url },
    { name: 'fresh shim replica (passthrough only, info)', url: freshUrl },
  ];
  const specs = [];
  for (const t of targets) {
    const session = await openLegacySession(t.url);
    const req = legacy('ping', undefined, session);
    await mustResult(t.url, req);
    specs.push({ name: t.name, spec: { url: t.url, headers: req.headers, body: req.body } });
  }
  ctx.log('  throughput');
  const load = await compare(
    specs.map((s) => ({ name: s.name, spec: { ...s.spec, connections: ctx.connections, durationS: ctx.durationS } })),
    { rounds: ctx.rounds, warmupS: 2, log: ctx.log },
  );
  ctx.log('  added latency (one request at a time, hrtime)');
  const samples: Record<string, LatencySample[]> = Object.fromEntries(specs.map((s) => [s.name, []]));
  for (let r = 0; r < ctx.rounds; r++) {
    for (const s of specs) {
      const sample = await sequentialLatency(s.spec.url, s.spec, 1_000);
      ctx.log(`    round ${r + 1} ${s.name}: p50 ${sample.p50} ms p99 ${sample.p99} ms`);
      samples[s.name]!.push(sample);
    }
  }
  const single = Object.fromEntries(specs.map((s) => [s.name, { p50: medianOf(samples[s.name]!, 'p50'), p99: medianOf(samples[s.name]!, 'p99') }]));
  const [shimN, directN, pipeN, freshN] = targets.map((t) => t.name) as [string, string, string, string];
  const added = round(single[shimN]!.p50 - single[directN]!.p50, 2);
  const pipeAdded = round(single[pipeN]!.p50 - single[directN]!.p50, 2);
  return {
    name: 'passthrough',
    title: 'Passthrough overhead (legacy `ping` in a session, SSE answer from the demo upstream)',
    rows: targets.map((t) => ({
      variant: t.name,
      'req/s (median)': load[t.name]!.rps,
      'p50 ms': load[t.name]!.p50,
      'p99 ms': load[t.name]!.p99,
      'p50 ms, 1 conn': single[t.name]!.p50,
      'p99 ms, 1 conn': single[t.name]!.p99,
      'shim ÷ this': t.name === shimN ? '—' : ratio(load[shimN]!.rps, load[t.name]!.rps),
    })),
    targets: [
      ratioTarget('passthrough ≥ 0.9× pipe proxy throughput', ratio(load[shimN]!.rps, load[pipeN]!.rps), 0.9),
      figureTarget('passthrough adds ≤ 1 ms p50 (1 connection, vs direct)', `+${added} ms (pipe proxy: +${pipeAdded} ms)`, { value: added, atMost: 1 }),
      { target: '(info) fresh shim replica vs pipe proxy throughput', value: `${ratio(load[freshN]!.rps, load[pipeN]!.rps)}×`, pass: null },
    ],
    notes: [
      'Throughput: autocannon, ' + ctx.connections + ' connections. Added latency: 1,000 sequential requests per round on one keep-alive connection, timed with hrtime; medians of the rounds.',
      `The fresh replica (key prefix ${FRESH_PREFIX}) starts with this scenario and forwards only these pings; the main shim has served the task scenarios before it. The target is the main shim's.`,
    ],
    raw: { load, single },
  };
}
