/**
 * A quick tool call, as a team sees it after putting the shim in front of a plain server built
 * with the official SDK (bench/baselines/sdk-plain-server.ts: `registerTool`, stateful Streamable
 * HTTP, one tool that answers at once): straight to the server, by an old client through the shim
 * (a session; the call is forwarded), and by a new client (SEP-2663) with the tool `forbidden` and
 * `auto`, on the embedded store and on Redis. Interleaved rounds; the shim's CPU per call from
 * /proc. The targets: a new client's quick call costs the shim at most 1.5× an old client's
 * forwarded one, keeps ≥ 0.8× the direct throughput and adds ≤ 1 ms p50 on one connection.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, ScenarioResult, TargetCheck } from '../lib/context.js';
import { costRound } from '../lib/cost-round.js';
import { untilIdle } from '../lib/cpu.js';
import { medianOf, sequentialLatency, type LatencySample } from '../lib/latency.js';
import { legacy, mustResult, openLegacySession, sep2663 } from '../lib/mcp.js';
import type { Served } from '../lib/proc.js';
import { startSdkPlainServer, startShim } from '../lib/servers.js';
import { median, ratio, round } from '../lib/stats.js';
import { figureTarget, ratioTarget } from '../lib/target.js';

/** What a team runs at moderate load; the figures were taken at this concurrency. */
const CONNECTIONS = 16;
const CALL = { name: 'echo', arguments: { text: 'hello' } };

interface Variant {
  name: string;
  url: string;
  /** The shim's pid, or undefined for the direct calls. */
  shim: number | undefined;
  req: { headers: Record<string, string>; body: string };
}

interface Round {
  rps: number;
  p50: number;
  p99: number;
  shimUs: number;
  upstreamUs: number;
}

export async function quickCall(ctx: BenchContext): Promise<ScenarioResult> {
  const upstream = await startSdkPlainServer();
  const started: Served[] = [upstream];
  try {
    const policies = {
      forbidden: policy(ctx.workDir, 'forbidden', { tools: { echo: 'forbidden' } }),
      auto: policy(ctx.workDir, 'auto', { default: 'auto' }),
    };
    const variants: Variant[] = [];
    const direct = await openLegacySession(upstream.url);
    variants.push({ name: 'direct to the server', url: upstream.url, shim: undefined, req: legacy('tools/call', CALL, direct) });
    for (const store of ['embedded', 'redis'] as const) {
      const redis = store === 'redis' ? { redis: ctx.redis.url } : {};
      const forbidden = await startShim({ upstream: upstream.url, policy: policies.forbidden, ...redis, env: { SHIM_REDIS_PREFIX: 'mts-quick-f' } });
      started.push(forbidden);
      const auto = await startShim({ upstream: upstream.url, policy: policies.auto, ...redis, env: { SHIM_REDIS_PREFIX: 'mts-quick-a' } });
      started.push(auto);
      const session = await openLegacySession(forbidden.url);
      variants.push({ name: `old client, forwarded (${store})`, url: forbidden.url, shim: forbidden.pid, req: legacy('tools/call', CALL, session) });
      variants.push({ name: `new client, forbidden (${store})`, url: forbidden.url, shim: forbidden.pid, req: sep2663('tools/call', CALL) });
      variants.push({ name: `new client, auto (${store})`, url: auto.url, shim: auto.pid, req: sep2663('tools/call', CALL) });
    }
    for (const v of variants) {
      const result = await mustResult(v.url, v.req);
      if (result.resultType === 'task') throw new Error(`${v.name}: the quick call became a task`);
    }
    for (const s of started.slice(1)) await untilIdle(s.pid);

    ctx.log(`  ${CONNECTIONS} connections (CPU per call from /proc)`);
    const rounds: Record<string, Round[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
    for (let r = 0; r < ctx.rounds; r++) {
      for (const v of variants) {
        const measured = await costRound(
          { url: v.url, connections: CONNECTIONS, durationS: ctx.durationS, headers: v.req.headers, body: v.req.body },
          { shim: v.shim ?? upstream.pid, upstream: upstream.pid },
        );
        const load = measured.load;
        const sample = { rps: load.rps, p50: load.p50, p99: load.p99, shimUs: v.shim ? measured.us.shim : 0, upstreamUs: measured.us.upstream };
        ctx.log(`    round ${r + 1} ${v.name}: ${Math.round(sample.rps)} req/s p50 ${sample.p50} ms, shim ${round(sample.shimUs, 1)} µs/call, upstream ${round(sample.upstreamUs, 1)} µs/call`);
        rounds[v.name]!.push(sample);
      }
    }
    ctx.log('  1 connection (hrtime, one call at a time)');
    const single: Record<string, LatencySample[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
    for (let r = 0; r < ctx.rounds; r++) {
      for (const v of variants) {
        const sample = await sequentialLatency(v.url, v.req, 1_000);
        ctx.log(`    round ${r + 1} ${v.name}: p50 ${sample.p50} ms p99 ${sample.p99} ms`);
        single[v.name]!.push(sample);
      }
    }

    const of = (name: string, key: keyof Round): number => round(median(rounds[name]!.map((x) => x[key])), 2);
    const directName = variants[0]!.name;
    const targets: TargetCheck[] = [];
    for (const store of ['embedded', 'redis'] as const) {
      const old = `old client, forwarded (${store})`;
      for (const policyName of ['forbidden', 'auto'] as const) {
        const name = `new client, ${policyName} (${store})`;
        const cpu = ratio(of(name, 'shimUs'), of(old, 'shimUs'));
        targets.push(
          figureTarget(`${name}: shim CPU per call ≤ 1.5× the old client's forwarded call`, `${cpu}× (${of(name, 'shimUs')} vs ${of(old, 'shimUs')} µs)`, { value: cpu, atMost: 1.5 }),
          ratioTarget(`${name}: throughput ≥ 0.8× direct`, ratio(of(name, 'rps'), of(directName, 'rps')), 0.8),
        );
        const added = round(medianOf(single[name]!, 'p50') - medianOf(single[directName]!, 'p50'), 2);
        targets.push(figureTarget(`${name}: adds ≤ 1 ms p50 (1 connection, vs direct)`, `+${added} ms`, { value: added, atMost: 1 }));
      }
    }
    return {
      name: 'quick-call',
      title: 'A quick tool call: direct, an old client through the shim, a new client through the shim',
      rows: variants.map((v) => ({
        variant: v.name,
        'req/s (median)': of(v.name, 'rps'),
        '÷ direct': ratio(of(v.name, 'rps'), of(directName, 'rps')),
        'p50 ms': of(v.name, 'p50'),
        'p99 ms': of(v.name, 'p99'),
        'p50 ms, 1 conn': medianOf(single[v.name]!, 'p50'),
        'p99 ms, 1 conn': medianOf(single[v.name]!, 'p99'),
        'shim CPU µs/call': v.shim ? of(v.name, 'shimUs') : '—',
        'upstream CPU µs/call': of(v.name, 'upstreamUs'),
      })),
      targets,
      notes: [
        `The server: the official SDK's McpServer with one registerTool tool (\`echo\`), stateful Streamable HTTP, SSE answers. Throughput and CPU: autocannon, ${CONNECTIONS} connections, ${ctx.rounds} interleaved rounds of ${ctx.durationS} s, medians; CPU per call is the shim process's user+system time from /proc over the calls it served. 1 connection: 1,000 sequential calls per round, hrtime.`,
        'The old client holds a session and calls without `params.task` (forwarded as it is); the new client sends 2026-07-28 stateless requests that declare the tasks extension. `forbidden` and `auto` are two shims with those policies for `echo`.',
      ],
      raw: { rounds, single },
    };
  } finally {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
  }
}

function policy(dir: string, name: string, body: Record<string, unknown>): string {
  const path = join(dir, `quick-${name}.json`);
  writeFileSync(path, JSON.stringify(body));
  return path;
}
