/**
 * Profiles the shim under one load: `node --import tsx bench/profile.ts [tasks-get|create|create-api|passthrough|quick-forbidden|quick-auto] [seconds]`.
 * quick-*: a new client's quick call of the SDK-built plain server's `echo` (bench/scenarios/quick-call.ts), embedded store.
 * Starts Redis, the demo upstream and a shim with --cpu-prof, drives it with autocannon, stops the
 * shim (which writes the .cpuprofile) and prints the top self-time functions.
 * BENCH_ALLOC=1 also samples what the shim allocates during the load (bench/probes/alloc-sampler.js)
 * and prints bytes per request, in all and by allocating function.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeAllocations } from './lib/alloc-summary.js';
import { runLoad } from './lib/load.js';
import { legacy, mustResult, openLegacySession, sep2663 } from './lib/mcp.js';
import { ROOT, sleep } from './lib/proc.js';
import { policyFile, startRedis, startSdkPlainServer, startShim, startUpstream } from './lib/servers.js';

const [what = 'tasks-get', seconds = '10'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'mts-prof-'));
const allocFile = process.env.BENCH_ALLOC === '1' ? join(dir, 'alloc.heapprofile') : undefined;
const quick = what.startsWith('quick-');
const redis = await startRedis();
const upstream = quick ? await startSdkPlainServer() : await startUpstream();
const quickPolicy = join(dir, 'quick-policy.json');
writeFileSync(quickPolicy, JSON.stringify({ tools: { echo: what === 'quick-auto' ? 'auto' : 'forbidden' } }));
// create-api: an api replica (no worker), as bench/scenarios/create.ts measures it.
const shim = await startShim({
  upstream: upstream.url,
  ...(quick ? {} : { redis: redis.url }),
  policy: quick ? quickPolicy : policyFile(dir),
  cpuProfDir: dir,
  ...(what === 'create-api' ? { role: 'api' as const } : {}),
  env: {
    ...(what === 'create-api' ? { SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: '0' } : {}),
    ...(allocFile ? { ALLOC_PROFILE_FILE: allocFile } : {}),
  },
  ...(allocFile ? { nodeArgs: ['--import', join(ROOT, 'bench/probes/alloc-sampler.js')] } : {}),
});
let allocRequests = 0;
try {
  const created = quick ? undefined : await mustResult(shim.url, sep2663('tools/call', { name: 'greet', arguments: { name: 'prof' } }));
  await sleep(500);
  const req = quick
    ? sep2663('tools/call', { name: 'echo', arguments: { text: 'prof' } })
    : what === 'create' || what === 'create-api'
      ? sep2663('tools/call', { name: 'greet', arguments: { name: 'prof' } })
      : what === 'passthrough'
        ? legacy('ping', undefined, await openLegacySession(shim.url))
        : sep2663('tasks/get', { taskId: created.taskId });
  // The quick-call scenario's concurrency.
  const load = { url: shim.url, connections: quick ? 16 : 32, headers: req.headers, body: req.body };
  // Sampled after a warm-up, so that what start-up and compilation allocate stays out.
  if (allocFile) await runLoad({ ...load, durationS: 2 });
  if (allocFile) process.kill(shim.pid, 'SIGUSR2');
  const result = await runLoad({ ...load, durationS: Number(seconds) });
  if (allocFile) {
    process.kill(shim.pid, 'SIGUSR2');
    allocRequests = result.total;
    for (let waited = 0; !existsSync(allocFile) && waited < 10_000; waited += 100) await sleep(100);
  }
  console.log(`${what}: ${Math.round(result.rps)} req/s p50 ${result.p50} ms p99 ${result.p99} ms`);
} finally {
  await shim.stop();
  await upstream.stop();
  await redis.stop();
}
const main = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()[0]!;
console.log(`profile: ${join(dir, main)}`);
console.log(execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/lib/profile-summary.ts'), join(dir, main), '40'], { cwd: ROOT }).toString());
if (allocFile) {
  const allocations = summarizeAllocations(JSON.parse(readFileSync(allocFile, 'utf8')), allocRequests);
  console.log(`allocated per request: ${allocations.bytesPerRequest} B (${allocRequests} requests sampled); by allocating function:`);
  for (const site of allocations.top) console.log(`${String(site.bytesPerRequest).padStart(7)} B ${(100 * site.share).toFixed(1).padStart(5)}%  ${site.where}`);
}
