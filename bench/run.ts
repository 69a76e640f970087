/**
 * `npm run bench`: every scenario against the shim and its baselines in one run.
 * Knobs (env): BENCH_ROUNDS (5), BENCH_DURATION_S (5), BENCH_CONNECTIONS (32),
 * BENCH_ONLY=tasks-get,create,… (a subset, written to bench/results/partial.json; with BENCH_MERGE=1 its
 * results replace those scenarios in latest.json and the doc is regenerated from the merge),
 * BENCH_PROFILE_DIR=dir (run the shim with --cpu-prof into dir; summarise with bench/lib/profile-summary.ts).
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, ScenarioResult } from './lib/context.js';
import { untilIdle } from './lib/cpu.js';
import { ROOT } from './lib/proc.js';
import { readHistory, recordRun } from './lib/history.js';
import { renderSection, writeDoc, type Machine } from './lib/report.js';
import { DASHBOARD_SEED, seedTraffic, type SeedSummary } from './lib/seed-traffic.js';
import { policyFile, startBareRedis, startPipeProxy, startRedis, startSdkBaseline, startShim, startUpstream } from './lib/servers.js';
import { createTasks } from './scenarios/create.js';
import { dashboard } from './scenarios/dashboard.js';
import { endToEnd } from './scenarios/e2e.js';
import { fanout } from './scenarios/fanout.js';
import { manyTasks } from './scenarios/many-tasks.js';
import { memory } from './scenarios/memory.js';
import { native } from './scenarios/native.js';
import { passthrough } from './scenarios/passthrough.js';
import { quickCall } from './scenarios/quick-call.js';
import { tasksGet } from './scenarios/tasks-get.js';

const SCENARIOS: Array<[string, (ctx: BenchContext) => Promise<ScenarioResult>]> = [
  ['tasks-get', tasksGet],
  ['create', createTasks],
  ['e2e', endToEnd],
  ['native', native],
  ['passthrough', passthrough],
  ['quick-call', quickCall],
  ['many-tasks', manyTasks],
  ['fanout', fanout],
  ['memory', memory],
  ['dashboard', dashboard],
];

const env = process.env;
const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : undefined;
const started = Date.now();
const loadBefore = loadavg().map((x) => x.toFixed(1)).join(' ');
const log = (line: string): void => {
  process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

/** The commit measured, marked when the work tree had changes. */
function commitOf(): string {
  try {
    const head = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
    const dirty = execSync('git status --porcelain --untracked-files=no -- src bench ":(exclude)bench/results"', { cwd: ROOT }).toString().trim() !== '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

function cpuModel(): string {
  try {
    const m = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1]!.trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

const workDir = mkdtempSync(join(tmpdir(), 'mts-bench-'));
const redis = await startRedis();
// Before the shim starts: it digests the recorded week at start-up, as a restarted replica does.
let seeded: SeedSummary | undefined;
if (!only || only.has('dashboard')) {
  seeded = await seedTraffic({ redisUrl: redis.url, prefix: 'mts', ...DASHBOARD_SEED });
  log(`seeded ${seeded.requests} requests and ${seeded.taskEvents} task events over ${DASHBOARD_SEED.days} days in ${seeded.ms} ms`);
}
const upstream = await startUpstream();
const policy = policyFile(workDir);
const profileDir = env.BENCH_PROFILE_DIR;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const shim = await startShim({ upstream: upstream.url, redis: redis.url, policy, cpuProfDir: profileDir });
const [sdk, bare, pipe] = await Promise.all([startSdkBaseline(), startBareRedis(redis.url), startPipeProxy(upstream.url)]);
log(`redis ${redis.url}, upstream ${upstream.url}, shim ${shim.url}, sdk ${sdk.url}, bare ${bare.url}, pipe ${pipe.url}`);
// No scenario measures while the shim digests the recorded week at start-up.
log(`shim idle after ${await untilIdle(shim.pid)} ms`);

const ctx: BenchContext = {
  redis,
  upstream,
  shim,
  sdk,
  bare,
  pipe,
  policy,
  workDir,
  rounds: Number(env.BENCH_ROUNDS ?? 5),
  durationS: Number(env.BENCH_DURATION_S ?? 5),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  log,
  seeded,
};

const results: ScenarioResult[] = [];
const failures: Array<{ name: string; error: string }> = [];
try {
  for (const [name, run] of SCENARIOS) {
    if (only && !only.has(name)) continue;
    log(`scenario ${name}`);
    try {
      results.push(await run(ctx));
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`scenario ${name} FAILED: ${error}`);
      failures.push({ name, error: err instanceof Error ? err.message : String(err) });
    }
  }
} finally {
  for (const s of [shim, sdk, bare, pipe, upstream]) await s.stop().catch(() => undefined);
  await redis.stop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}

const machine: Machine = {
  nproc: Number(execSync('nproc').toString().trim()),
  cpu: cpuModel(),
  node: process.version,
  date: new Date().toISOString(),
  command: 'npm run bench',
  load: `${loadBefore} at start, ${loadavg().map((x) => x.toFixed(1)).join(' ')} at end`,
  settings: `${ctx.rounds} rounds × ${ctx.durationS} s, ${ctx.connections} connections, took ${Math.round((Date.now() - started) / 1000)} s`,
};
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const latestFile = join(ROOT, 'bench/results/latest.json');
const historyFile = join(ROOT, 'bench/results/history.json');
let outFile = join(ROOT, only ? 'bench/results/partial.json' : 'bench/results/latest.json');
writeFileSync(outFile, `${JSON.stringify({ machine, results, failures }, null, 2)}\n`);
if (!only) {
  const history = recordRun(historyFile, { date: machine.date, commit: commitOf(), settings: machine.settings }, results);
  writeDoc(join(ROOT, 'docs/benchmarks.md'), renderSection(machine, results, failures, history));
} else if (env.BENCH_MERGE === '1' && existsSync(latestFile)) {
  // Re-run scenarios replace theirs in the full run's results; the run's machine line notes the merge.
  const latest = JSON.parse(readFileSync(latestFile, 'utf8')) as { machine: Machine; results: ScenarioResult[]; failures: Array<{ name: string; error: string }> };
  const order = SCENARIOS.map(([name]) => name);
  const merged = [...latest.results.filter((r) => !only.has(r.name)), ...results].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const mergedFailures = [...latest.failures.filter((f) => !only.has(f.name)), ...failures];
  const mergedMachine = { ...latest.machine, settings: `${latest.machine.settings}; re-run ${[...only].join(', ')} at ${machine.date} (load ${machine.load})` };
  writeFileSync(latestFile, `${JSON.stringify({ machine: mergedMachine, results: merged, failures: mergedFailures }, null, 2)}\n`);
  // A merge is not a full run: the history stays as the last full runs recorded it.
  writeDoc(join(ROOT, 'docs/benchmarks.md'), renderSection(mergedMachine, merged, mergedFailures, readHistory(historyFile)));
  outFile = latestFile;
}
for (const r of results) for (const t of r.targets) log(`${t.pass === null ? 'info' : t.pass ? 'pass' : 'MISS'}  ${r.name}: ${t.target} — ${t.value}`);
log(`wrote ${outFile}${failures.length ? `; ${failures.length} scenario(s) failed` : ''}`);
process.exit(failures.length ? 1 : 0);
