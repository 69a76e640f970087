/**
 * What the task scenarios leave in the shim's process, as a forwarded request's cost:
 * `npx tsx bench/between-scenarios.ts [tasks-get,create,e2e]`.
 *
 * Starts what `npm run bench` starts, measures the shim's and the pipe proxy's CPU per forwarded
 * `ping` (4 interleaved rounds of 4 s, medians), then runs each named scenario of bench/scenarios
 * on that shim and measures again. The fresh shim keeps up with the pipe proxy; after the create
 * scenario its hop costs 12–30 µs more per request (docs/decisions/0012-benchmark-method.md). Run it
 * several times before and after a change: one run is as noisy as the effect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, ScenarioResult } from './lib/context.js';
import { costRound } from './lib/cost-round.js';
import { legacy, mustResult, openLegacySession } from './lib/mcp.js';
import { sleep, type Served } from './lib/proc.js';
import { policyFile, startBareRedis, startPipeProxy, startRedis, startSdkBaseline, startShim, startUpstream } from './lib/servers.js';
import { median, round } from './lib/stats.js';
import { createTasks } from './scenarios/create.js';
import { endToEnd } from './scenarios/e2e.js';
import { tasksGet } from './scenarios/tasks-get.js';

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<ScenarioResult>> = { 'tasks-get': tasksGet, create: createTasks, e2e: endToEnd };
const ROUNDS = 4;
const ROUND_S = 4;

const wanted = (process.argv[2] ?? 'tasks-get,create,e2e').split(',');
const unknown = wanted.filter((name) => !(name in SCENARIOS));
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}: choose from ${Object.keys(SCENARIOS).join(', ')}`);
  process.exit(2);
}

const workDir = mkdtempSync(join(tmpdir(), 'mts-between-'));
const redis = await startRedis();
const started: Served[] = [];
try {
  const upstream = await startUpstream();
  started.push(upstream);
  const policy = policyFile(workDir);
  const shim = await startShim({ upstream: upstream.url, redis: redis.url, policy });
  started.push(shim);
  const [sdk, bare, pipe] = await Promise.all([startSdkBaseline(), startBareRedis(redis.url), startPipeProxy(upstream.url)]);
  started.push(sdk, bare, pipe);
  const ctx: BenchContext = { redis, upstream, shim, sdk, bare, pipe, policy, workDir, rounds: 3, durationS: 5, connections: 32, log: () => undefined };
  const hops: Array<{ hop: Served; load: { url: string; connections: number; headers: Record<string, string>; body: string } }> = [];
  for (const hop of [shim, pipe]) {
    const session = await openLegacySession(hop.url);
    const req = legacy('ping', undefined, session);
    await mustResult(hop.url, req);
    hops.push({ hop, load: { url: hop.url, connections: 32, headers: req.headers, body: req.body } });
  }
  const measure = async (when: string): Promise<void> => {
    const samples = hops.map(() => ({ rps: [] as number[], hopUs: [] as number[], upstreamUs: [] as number[] }));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, { hop, load }] of hops.entries()) {
        const measured = await costRound({ ...load, durationS: ROUND_S }, { hop: hop.pid, upstream: upstream.pid });
        samples[i]!.rps.push(measured.rps);
        samples[i]!.hopUs.push(measured.us.hop);
        samples[i]!.upstreamUs.push(measured.us.upstream);
      }
    }
    const [s, p] = samples.map((x) => ({ rps: median(x.rps), hop: round(median(x.hopUs), 1), upstream: round(median(x.upstreamUs), 1) }));
    console.log(
      `${when.padEnd(16)} shim ${Math.round(s!.rps)} req/s, hop ${s!.hop} µs, upstream ${s!.upstream} µs | pipe proxy ${Math.round(p!.rps)} req/s, hop ${p!.hop} µs, upstream ${p!.upstream} µs | ratio ${round(s!.rps / p!.rps, 3)}×`,
    );
  };
  await sleep(2000);
  await measure('fresh');
  for (const name of wanted) {
    await SCENARIOS[name]!(ctx);
    await sleep(1000);
    await measure(`after ${name}`);
  }
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  await redis.stop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}
