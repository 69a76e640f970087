/**
 * Profiles the shim under one load: `node --import tsx bench/profile.ts [tasks-get|create|create-api|passthrough] [seconds]`.
 * Starts Redis, the demo upstream and a shim with --cpu-prof, drives it with autocannon, stops the
 * shim (which writes the .cpuprofile) and prints the top self-time functions.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad } from './lib/load.js';
import { legacy, mustResult, openLegacySession, sep2663 } from './lib/mcp.js';
import { ROOT, sleep } from './lib/proc.js';
import { policyFile, startRedis, startShim, startUpstream } from './lib/servers.js';

const [what = 'tasks-get', seconds = '10'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'mts-prof-'));
const redis = await startRedis();
const upstream = await startUpstream();
// create-api: an api replica (no worker), as bench/scenarios/create.ts measures it.
const shim = await startShim({
  upstream: upstream.url,
  redis: redis.url,
  policy: policyFile(dir),
  cpuProfDir: dir,
  ...(what === 'create-api' ? { role: 'api' as const, env: { SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: '0' } } : {}),
});
try {
  const created = await mustResult(shim.url, sep2663('tools/call', { name: 'greet', arguments: { name: 'prof' } }));
  await sleep(500);
  const req =
    what === 'create' || what === 'create-api'
      ? sep2663('tools/call', { name: 'greet', arguments: { name: 'prof' } })
      : what === 'passthrough'
        ? legacy('ping', undefined, await openLegacySession(shim.url))
        : sep2663('tasks/get', { taskId: created.taskId });
  const result = await runLoad({ url: shim.url, connections: 32, durationS: Number(seconds), headers: req.headers, body: req.body });
  console.log(`${what}: ${Math.round(result.rps)} req/s p50 ${result.p50} ms p99 ${result.p99} ms`);
} finally {
  await shim.stop();
  await upstream.stop();
  await redis.stop();
}
const main = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()[0]!;
console.log(`profile: ${join(dir, main)}`);
console.log(execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/lib/profile-summary.ts'), join(dir, main), '40'], { cwd: ROOT }).toString());
