/**
 * CPU ms per dashboard API request of the shim, on the bench's week of recorded traffic:
 * `npx tsx bench/dashboard-cost.ts [requests per endpoint and range] [redis url]`.
 *
 * Seeds the week (bench/lib/seed-traffic.ts) into a fresh Redis, or uses the Redis given (seeded
 * before, prefix `mts`), starts a shim, waits for its start-up warm-up, then sends the requests of
 * each endpoint and range one after the other and reads the CPU time the shim and Redis used from
 * /proc. Wall-clock ms are shown too, but CPU ms stay put while other work shares the cores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, redisPid } from './lib/cpu.js';
import { get } from './lib/http.js';
import { sleep, type Served } from './lib/proc.js';
import { DASHBOARD_SEED, seedTraffic } from './lib/seed-traffic.js';
import { policyFile, startRedis, startShim, startUpstream, type RedisServer } from './lib/servers.js';
import { percentile, round } from './lib/stats.js';

const ENDPOINTS = ['overview', 'traffic', 'clients', 'tasks', 'latency', 'verdict', 'cutover', 'recording'];
const RANGES = ['1h', '24h', '7d', '30d'];
const [requestsArg = '60', redisArg] = process.argv.slice(2);
const requests = Number(requestsArg);

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
  // The start-up warm-up: wait until the shim's CPU climbs less than 20 ms a second (a profiler costs a little all along).
  const warmStart = cpuMs(shim.pid);
  for (let i = 0, last = -Infinity, now = warmStart; now - last >= 20 && i < 60; i++) {
    await sleep(1_000);
    [last, now] = [now, cpuMs(shim.pid)];
  }
  process.stderr.write(`start-up warm-up: ${cpuMs(shim.pid) - warmStart} ms CPU\n`);
  console.log(['endpoint', 'first ms', 'p50 ms', 'p99 ms', 'shim CPU ms/req', 'redis CPU ms/req', 'bytes'].join('\t'));
  for (const range of RANGES) {
    const t0 = process.hrtime.bigint();
    const c0 = cpuMs(shim.pid);
    await get(`${base}/dashboard/api/overview?range=${range}`);
    const first = `${round(Number(process.hrtime.bigint() - t0) / 1e6, 1)} (${cpuMs(shim.pid) - c0} CPU)`;
    for (const endpoint of ENDPOINTS) {
      const ms: number[] = [];
      let bytes = 0;
      const shim0 = cpuMs(shim.pid);
      const redis0 = cpuMs(redisProcess);
      for (let i = 0; i < requests; i++) {
        const s = process.hrtime.bigint();
        const reply = await get(`${base}/dashboard/api/${endpoint}?range=${range}`);
        ms.push(Number(process.hrtime.bigint() - s) / 1e6);
        if (reply.status !== 200) throw new Error(`${endpoint}?range=${range}: HTTP ${reply.status}`);
        bytes = reply.text.length;
      }
      const shimPer = (cpuMs(shim.pid) - shim0) / requests;
      const redisPer = (cpuMs(redisProcess) - redis0) / requests;
      console.log(
        [`${endpoint}?range=${range}`, endpoint === 'overview' ? first : '', round(percentile(ms, 50), 1), round(percentile(ms, 99), 1), round(shimPer, 2), round(redisPer, 2), bytes].join('\t'),
      );
    }
  }
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
}
