/**
 * CPU cost per request, which stays put when the host is busy (req/s does not):
 * `npx tsx bench/cost.ts [tasks-get|create|passthrough|quick|all] [seconds] [rounds]`.
 * `quick`: a new client's quick call (`echo` of the SDK-built plain server, embedded store), the
 * tool `forbidden` and `auto`, and an old client's forwarded call (bench/scenarios/quick-call.ts).
 *
 * Starts Redis, the demo upstream, a shim (an `api` replica for create, as bench/scenarios/create.ts
 * measures it) and the baselines of `npm run bench`, loads each variant with autocannon (32
 * connections, interleaved rounds), and reads the CPU time the serving process, Redis and the demo
 * upstream used from /proc. What it prints: req/s, and µs of CPU per request of each, medians of
 * the rounds. For a hop (pipe proxy, passthrough) the serving process is the hop, not the upstream;
 * the upstream's CPU per request is printed beside it, because it changes with what is in front of
 * it (docs/decisions/0012-benchmark-method.md: 132 µs straight from autocannon, about 100 behind the pipe proxy).
 * Use it to see what a change costs or saves while other work shares the cores; quote `npm run bench`
 * (a quiet host) for throughput.
 *
 * `COST_AGAINST=DIR` adds, next to each shim variant, the same shim run from the checkout in DIR
 * (built: `git worktree add DIR <commit> && (cd DIR && npm run build)`), interleaved in the same
 * rounds: the A/B of a change on a host whose speed drifts between runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { costRound } from './lib/cost-round.js';
import { redisPid } from './lib/cpu.js';
import { legacy, mustResult, openLegacySession, sep2663 } from './lib/mcp.js';
import { sleep, type Served } from './lib/proc.js';
import { writeFileSync } from 'node:fs';
import { policyFile, startBareRedis, startPipeProxy, startRedis, startSdkPlainServer, startShim, startUpstream, type ShimStart } from './lib/servers.js';
import { median, round } from './lib/stats.js';

const [what = 'all', secondsArg = '5', roundsArg = '3'] = process.argv.slice(2);
const seconds = Number(secondsArg);
const rounds = Number(roundsArg);
const CONNECTIONS = 32;
const against = process.env.COST_AGAINST;

interface Variant {
  scenario: string;
  name: string;
  url: string;
  /** The process whose CPU a request costs (the server, or the hop in front of the upstream). */
  pid: number;
  req: { headers: Record<string, string>; body: string };
  /** The upstream this variant calls, when it is not the demo upstream. */
  upstreamPid?: number;
}

interface Sample {
  rps: number;
  serverUs: number;
  redisUs: number;
  upstreamUs: number;
}

const dir = mkdtempSync(join(tmpdir(), 'mts-cost-'));
const redis = await startRedis();
const upstream = await startUpstream();
const policy = policyFile(dir);
const started: Served[] = [upstream];
const wanted = (scenario: string): boolean => what === 'all' || what === scenario;
try {
  const redisProcess = await redisPid(redis.url);
  const variants: Variant[] = [];
  /** This checkout's shim, and with COST_AGAINST the other one's, each under its own key prefix. */
  const shims = async (o: Omit<ShimStart, 'checkout'>, prefix: string): Promise<Array<{ label: string; served: Served }>> => {
    const runs = [{ label: '', checkout: undefined as string | undefined }];
    if (against) runs.push({ label: ' (against)', checkout: against });
    const out: Array<{ label: string; served: Served }> = [];
    for (const run of runs) {
      const served = await startShim({ ...o, checkout: run.checkout, env: { ...o.env, SHIM_REDIS_PREFIX: `${prefix}${run.label ? '-against' : ''}` } });
      started.push(served);
      out.push({ label: run.label, served });
    }
    return out;
  };
  if (wanted('tasks-get') || wanted('create')) {
    const bare = await startBareRedis(redis.url);
    started.push(bare);
    if (wanted('tasks-get')) {
      for (const { label, served } of await shims({ upstream: upstream.url, redis: redis.url, policy }, 'mts-cost-get')) {
        const created = await mustResult(served.url, sep2663('tools/call', { name: 'greet', arguments: { name: 'cost' } }));
        await sleep(500);
        const req = sep2663('tasks/get', { taskId: created.taskId });
        variants.push({ scenario: 'tasks-get', name: `shim tasks/get${label}`, url: served.url, pid: served.pid, req });
      }
      const req = sep2663('tasks/get', { taskId: 'b'.repeat(22) });
      variants.push({ scenario: 'tasks-get', name: 'bare GET', url: `${bare.url}/get`, pid: bare.pid, req });
    }
    if (wanted('create')) {
      const req = sep2663('tools/call', { name: 'greet', arguments: { name: 'cost' } });
      // No limit would be closer to the baseline, but the check runs in production by default.
      const api = { upstream: upstream.url, redis: redis.url, policy, role: 'api' as const, env: { SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: '1000000' } };
      for (const { label, served } of await shims(api, 'mts-cost')) {
        variants.push({ scenario: 'create', name: `shim api create${label}`, url: served.url, pid: served.pid, req });
      }
      variants.push({ scenario: 'create', name: 'bare SET', url: `${bare.url}/create`, pid: bare.pid, req });
    }
  }
  if (wanted('passthrough')) {
    const pipe = await startPipeProxy(upstream.url);
    started.push(pipe);
    const hops = (await shims({ upstream: upstream.url, redis: redis.url, policy }, 'mts-cost-pass')).map(({ label, served }) => ({ name: `shim passthrough${label}`, served }));
    for (const { name, served } of [...hops, { name: 'pipe proxy', served: pipe }]) {
      const req = legacy('ping', undefined, await openLegacySession(served.url));
      await mustResult(served.url, req);
      variants.push({ scenario: 'passthrough', name, url: served.url, pid: served.pid, req });
    }
  }

  if (wanted('quick')) {
    const plain = await startSdkPlainServer();
    started.push(plain);
    const call = { name: 'echo', arguments: { text: 'cost' } };
    for (const mode of ['forbidden', 'auto'] as const) {
      const quickPolicy = join(dir, `quick-${mode}.json`);
      writeFileSync(quickPolicy, JSON.stringify({ tools: { echo: mode } }));
      for (const { label, served } of await shims({ upstream: plain.url, policy: quickPolicy }, `mts-cost-quick-${mode}`)) {
        const req = sep2663('tools/call', call);
        await mustResult(served.url, req);
        variants.push({ scenario: 'quick', name: `new client ${mode}${label}`, url: served.url, pid: served.pid, req, upstreamPid: plain.pid });
        if (mode === 'forbidden') {
          const old = legacy('tools/call', call, await openLegacySession(served.url));
          variants.push({ scenario: 'quick', name: `old client forwarded${label}`, url: served.url, pid: served.pid, req: old, upstreamPid: plain.pid });
        }
      }
    }
  }

  const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      const measured = await costRound(
        { url: v.url, connections: CONNECTIONS, durationS: seconds, headers: v.req.headers, body: v.req.body },
        { server: v.pid, redis: redisProcess, upstream: v.upstreamPid ?? upstream.pid },
      );
      const sample = { rps: measured.rps, serverUs: measured.us.server, redisUs: measured.us.redis, upstreamUs: measured.us.upstream };
      samples.get(v.name)!.push(sample);
      process.stderr.write(`round ${r + 1} ${v.name}: ${Math.round(sample.rps)} req/s, ${round(sample.serverUs, 1)} µs server CPU/req, ${round(sample.redisUs, 1)} µs Redis CPU/req, ${round(sample.upstreamUs, 1)} µs upstream CPU/req\n`);
    }
  }
  console.log('| scenario | variant | req/s | server CPU µs/req | Redis CPU µs/req | upstream CPU µs/req |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const v of variants) {
    const s = samples.get(v.name)!;
    const m = (k: keyof Sample): number => median(s.map((x) => x[k]));
    console.log(`| ${v.scenario} | ${v.name} | ${Math.round(m('rps'))} | ${round(m('serverUs'), 1)} | ${round(m('redisUs'), 1)} | ${round(m('upstreamUs'), 1)} |`);
  }
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  await redis.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
