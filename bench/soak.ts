/**
 * `npm run bench:soak`: two replicas on one Redis, SOAK_TASKS (1,000) tasks kept in flight and
 * polled at their pollIntervalMs, plus SOAK_STREAMS (200) listen streams, for SOAK_DURATION_S
 * (300) seconds. Reports errors (target zero), stuck tasks (zero), and the memory of each replica
 * and of Redis over time, into bench/results/soak.json and docs/benchmarks.md.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ROOT, sleep } from './lib/proc.js';
import { renderSoak, writeSoakDoc, type SoakSample } from './lib/soak-report.js';
import { TaskLoad } from './lib/soak-load.js';
import { ListenLoad } from './lib/soak-listen.js';
import { policyFile, startRedis, startShim, startUpstream } from './lib/servers.js';

const env = process.env;
const TASKS = Number(env.SOAK_TASKS ?? 1_000);
const STREAMS = Number(env.SOAK_STREAMS ?? 200);
const DURATION_S = Number(env.SOAK_DURATION_S ?? 300);
const SAMPLE_S = Number(env.SOAK_SAMPLE_S ?? 15);
/** A task runs 5–25 s, so each slot is refilled a dozen times or more in a soak of minutes. */
const TASK_SECONDS = { min: 5, max: 25 };
/** Tasks must end within their length plus this; anything later is stuck. */
const DRAIN_GRACE_MS = 60_000;

const started = Date.now();
const log = (line: string): void => {
  process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
};

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

const workDir = mkdtempSync(join(tmpdir(), 'mts-soak-'));
const redis = await startRedis();
const upstream = await startUpstream();
const policy = policyFile(workDir);
// Every slot runs its task to the end: the workers must hold them all at once. The soak's one
// principal keeps TASKS open by design, so its limit sits above that (the limit has its own tests).
const shimEnv = { SHIM_WORKER_CONCURRENCY: String(Math.ceil(TASKS / 2) + 50), SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: String(TASKS * 2) };
const replicas = await Promise.all([
  startShim({ upstream: upstream.url, redis: redis.url, policy, env: shimEnv }),
  startShim({ upstream: upstream.url, redis: redis.url, policy, env: shimEnv }),
]);
const inspect = new Redis(redis.url);
log(`redis ${redis.url}, upstream ${upstream.url}, replicas ${replicas.map((r) => r.url).join(' ')}`);
log(`${TASKS} tasks in flight, ${STREAMS} listen streams, ${DURATION_S} s`);

const urls = replicas.map((r) => r.url);
const tasks = new TaskLoad({ urls, inFlight: TASKS, seconds: TASK_SECONDS, log });
const listens = new ListenLoad({ urls, streams: STREAMS, liveTasks: () => tasks.liveIds(), log }, (id) => tasks.endedAt(id));
const samples: SoakSample[] = [];
const loadBefore = loadavg().map((x) => x.toFixed(1)).join(' ');

async function sample(): Promise<void> {
  const info = await inspect.info('memory');
  samples.push({
    atS: Math.round((Date.now() - started) / 1000),
    replicaRssMiB: replicas.map((r) => rssMiB(r.pid)),
    redisUsedMiB: Math.round((Number(/used_memory:(\d+)/.exec(info)?.[1]) / 1024 / 1024) * 10) / 10,
    redisKeys: await inspect.dbsize(),
    inFlight: tasks.inFlight,
    completed: tasks.completed,
    polls: tasks.polls,
    errors: tasks.errors.count + listens.errors.count,
    openStreams: listens.open,
    notifications: listens.notifications,
  });
  const s = samples[samples.length - 1]!;
  log(`rss ${s.replicaRssMiB.join('/')} MiB, redis ${s.redisUsedMiB} MiB ${s.redisKeys} keys, in flight ${s.inFlight}, done ${s.completed}, polls ${s.polls}, streams ${s.openStreams}, notifications ${s.notifications}, errors ${s.errors}`);
}

let outcome: ReturnType<typeof renderSoak> | undefined;
try {
  tasks.start();
  listens.start();
  await sample();
  const end = Date.now() + DURATION_S * 1000;
  while (Date.now() < end) {
    await sleep(Math.min(SAMPLE_S * 1000, end - Date.now()));
    await sample();
  }
  log('stop creating; waiting for every task to end');
  const stuck = await tasks.drain(TASK_SECONDS.max * 1000 + DRAIN_GRACE_MS);
  await listens.stop();
  await sample();
  outcome = renderSoak({
    command: 'npm run bench:soak',
    date: new Date().toISOString(),
    node: process.version,
    nproc: Number(execSync('nproc').toString().trim()),
    load: `${loadBefore} at start, ${loadavg().map((x) => x.toFixed(1)).join(' ')} at end`,
    settings: { tasks: TASKS, streams: STREAMS, durationS: DURATION_S, taskSeconds: TASK_SECONDS },
    samples,
    created: tasks.created,
    completed: tasks.completed,
    stuck,
    errors: [...tasks.errors.byKind, ...listens.errors.byKind],
    notifications: listens.notifications,
    reopened: listens.reopened,
  });
} finally {
  tasks.stop();
  await listens.stop();
  inspect.disconnect();
  for (const s of [...replicas, upstream]) await s.stop().catch(() => undefined);
  await redis.stop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}

if (!outcome) throw new Error('the soak ended without a report');
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(join(ROOT, 'bench/results/soak.json'), `${JSON.stringify(outcome.json, null, 2)}\n`);
writeSoakDoc(join(ROOT, 'docs/benchmarks.md'), outcome.markdown);
log(`wrote bench/results/soak.json and docs/benchmarks.md: ${outcome.verdict}`);
process.exit(outcome.pass ? 0 : 1);
