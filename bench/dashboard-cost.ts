/**
 * CPU ms per dashboard API request of the shim, on the bench's week of recorded traffic:
 * `npx tsx bench/dashboard-cost.ts [requests per endpoint and range] [redis url]`.
 *
 * Seeds the week (bench/lib/seed-traffic.ts) into a fresh Redis, or uses the Redis given (seeded
 * before, prefix `mts`), starts a shim, waits for its start-up warm-up, then per range times its
 * first request, the requests of each endpoint one after the other (most answered from the range's
 * snapshot of the last second) and, with DASHBOARD_COST_FRESH=n, n requests of each endpoint spaced
 * past the snapshot's second (each a fresh computation, as a page polling every 5 s meets). CPU is
 * the shim's and Redis's, from /proc/<pid>/task/<tid>/schedstat (ns), which stays put while other
 * work shares the cores; the wall-clock ms do not.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisPid } from './lib/cpu.js';
import { get } from './lib/http.js';
import { sleep, type Served } from './lib/proc.js';
import { DASHBOARD_SEED, seedTraffic } from './lib/seed-traffic.js';
import { policyFile, startRedis, startShim, startUpstream, type RedisServer } from './lib/servers.js';
import { percentile, round } from './lib/stats.js';

const ENDPOINTS = ['overview', 'traffic', 'clients', 'tasks', 'latency', 'verdict', 'cutover', 'recording'];
const RANGES = ['1h', '24h', '7d', '30d'];
const [requestsArg = '30', redisArg] = process.argv.slice(2);
const requests = Number(requestsArg);
const fresh = Number(process.env.DASHBOARD_COST_FRESH ?? 0);
/** Past the shim's SNAPSHOT_MS (1 s): the next request computes the range's figures afresh. */
const FRESH_GAP_MS = 1_100;

/** CPU time of every thread of a process so far, in ms. */
function cpu(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

interface Sample {
  ms: number[];
  shimMs: number;
  redisMs: number;
  bytes: number;
}

const dir = mkdtempSync(join(tmpdir(), 'mts-dash-cost-'));
let redis: RedisServer | undefined;
const started: Served[] = [];
try {
  let url = redisArg;
  if (!url) {
    redis = await startRedis();
    url = redis.url;
    const seeded = await seedTraffic({ redisUrl: url, prefix: 'mts', ...DASHBOARD_SEED });
    process.stderr.write(`seeded ${seeded.requests} requests in ${seeded.ms} ms\n`);
  }
  const redisProcess = await redisPid(url);
  const upstream = await startUpstream();
  started.push(upstream);
  const shim = await startShim({ upstream: upstream.url, redis: url, policy: policyFile(dir), cpuProfDir: process.env.BENCH_PROFILE_DIR });
  started.push(shim);
  const base = shim.url.replace(/\/mcp$/, '');
  // The start-up warm-up: wait until the shim uses less than a tenth of a core (a profiler costs a little all along).
  const warmStart = cpu(shim.pid);
  for (let i = 0, last = -Infinity, now = warmStart; now - last >= 100 && i < 60; i++) {
    await sleep(1_000);
    [last, now] = [now, cpu(shim.pid)];
  }
  process.stderr.write(`start-up warm-up: ${round(cpu(shim.pid) - warmStart, 0)} ms CPU\n`);

  const sample = async (path: string, n: number, gapMs = 0): Promise<Sample> => {
    const s: Sample = { ms: [], shimMs: 0, redisMs: 0, bytes: 0 };
    for (let i = 0; i < n; i++) {
      if (gapMs > 0) await sleep(gapMs);
      const shim0 = cpu(shim.pid);
      const redis0 = cpu(redisProcess);
      const t0 = process.hrtime.bigint();
      const reply = await get(`${base}${path}`);
      s.ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      s.shimMs += cpu(shim.pid) - shim0;
      s.redisMs += cpu(redisProcess) - redis0;
      if (reply.status !== 200) throw new Error(`${path}: HTTP ${reply.status}`);
      s.bytes = reply.text.length;
    }
    return s;
  };
  const line = (name: string, s: Sample) =>
    console.log([name, round(percentile(s.ms, 50), 2), round(percentile(s.ms, 99), 2), round(s.shimMs / s.ms.length, 2), round(s.redisMs / s.ms.length, 2), s.bytes].join('\t'));
  console.log(['request', 'p50 ms', 'p99 ms', 'shim CPU ms/req', 'redis CPU ms/req', 'bytes'].join('\t'));
  for (const range of RANGES) {
    await sleep(FRESH_GAP_MS);
    line(`overview?range=${range} first`, await sample(`/dashboard/api/overview?range=${range}`, 1));
    for (const endpoint of ENDPOINTS) line(`${endpoint}?range=${range}`, await sample(`/dashboard/api/${endpoint}?range=${range}`, requests));
    if (fresh > 0) {
      for (const endpoint of ENDPOINTS) line(`${endpoint}?range=${range} fresh`, await sample(`/dashboard/api/${endpoint}?range=${range}`, fresh, FRESH_GAP_MS));
    }
  }
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
}
