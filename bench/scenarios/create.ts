/**
 * Durable task creation (tools/call → CreateTaskResult) per second vs the same two baselines.
 * The main shim row is an `api` replica, as a split deployment runs it: it writes the task and
 * queues its job, and a `worker` replica runs the jobs between rounds (in production the workers
 * run on their own machines; here they would take the same two cores). The all-in-one replica,
 * which runs its own jobs while it creates, is kept as a row for comparison.
 */
import { compare } from '../lib/compare.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { legacy, mustResult, openLegacySession, sep2663 } from '../lib/mcp.js';
import { sleep, type Served } from '../lib/proc.js';
import { queueDepth, startShim } from '../lib/servers.js';
import { median, ratio } from '../lib/stats.js';
import { ratioTarget } from '../lib/target.js';

/** The api/worker pair keeps its own queue, so that the all-in-one replica's worker never takes its jobs. */
const SPLIT_PREFIX = 'mts-bench-split';
/**
 * No job runs during an api round, so every task it creates stays open until the next drain: the
 * default 1000 open tasks per principal would refuse the rest. The highest limit keeps the check
 * (one Redis call per create) on the measured path.
 */
const SPLIT_MAX_OPEN_TASKS = '1000000';
const DRAIN_MAX_MS = 120_000;
const API_ROW = 'shim api replica (Redis: task hash + job in one script)';
const ALL_ROW = 'shim all-in-one replica (API + worker in one process)';
const SDK_ROW = 'SDK in-memory task server';
const BARE_ROW = 'bare node:http + 1 Redis SET';

export async function createTasks(ctx: BenchContext): Promise<ScenarioResult> {
  const split = { upstream: ctx.upstream.url, redis: ctx.redis.url, policy: ctx.policy, env: { SHIM_REDIS_PREFIX: SPLIT_PREFIX, SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: SPLIT_MAX_OPEN_TASKS } };
  const api = await startShim({ ...split, role: 'api' });
  try {
    const shimReq = sep2663('tools/call', { name: 'greet', arguments: { name: 'bench' } });
    for (const url of [api.url, ctx.shim.url]) {
      const probe = await mustResult(url, shimReq);
      if (probe.resultType !== 'task') throw new Error(`greet did not create a task at ${url}: ${JSON.stringify(probe)}`);
    }
    const session = await openLegacySession(ctx.sdk.url, { tasks: {} });
    const sdkReq = legacy('tools/call', { name: 'greet', arguments: { name: 'bench' }, task: { ttl: 60_000 } }, session);
    await mustResult(ctx.sdk.url, sdkReq);
    const base = { connections: ctx.connections, durationS: ctx.durationS };
    const shimSpec = { ...base, headers: shimReq.headers, body: shimReq.body };
    const variants = [
      { name: API_ROW, spec: { ...shimSpec, url: api.url } },
      { name: ALL_ROW, spec: { ...shimSpec, url: ctx.shim.url } },
      { name: SDK_ROW, spec: { ...base, url: ctx.sdk.url, headers: sdkReq.headers, body: sdkReq.body } },
      { name: BARE_ROW, spec: { ...base, url: `${ctx.bare.url}/create`, headers: { 'content-type': 'application/json' }, body: shimReq.body } },
    ];
    const drained: number[] = [];
    /** Per all-in-one round, how long its replica still ran the jobs it had created when the round ended. */
    const allTails: number[] = [];
    let calls = 0;
    const between = async (): Promise<void> => {
      const started = Date.now();
      await runQueuedJobs(api, split, ctx.log);
      const own = Date.now();
      await waitForEmptyQueue(ctx.shim.url);
      // Variants run in order API, ALL, SDK, BARE: the third wait of a round follows the all-in-one round.
      if (calls++ % variants.length === 2) allTails.push(Date.now() - own);
      drained.push(Date.now() - started);
    };
    const result = await compare(variants, { rounds: ctx.rounds, warmupS: 1, log: ctx.log, between });
    // Create+execute: tasks created (2xx) per second of the round and of the time their jobs still ran after it.
    const executed = median(result[ALL_ROW]!.rounds.map((r, i) => r.ok / (ctx.durationS + (allTails[i] ?? 0) / 1000)));
    // Nothing of this scenario may still run when the next one measures.
    await between();
    const shim = result[API_ROW]!;
    const all = result[ALL_ROW]!;
    const bare = result[BARE_ROW]!;
    const sdk = result[SDK_ROW]!;
    return {
      name: 'create',
      title: 'Durable task creation (tools/call → CreateTaskResult, instant tool)',
      rows: variants.map((v) => ({
        variant: v.name,
        'creates/s (median)': result[v.name]!.rps,
        'p50 ms': result[v.name]!.p50,
        'p99 ms': result[v.name]!.p99,
        'api shim ÷ this': v.name === API_ROW ? '—' : ratio(shim.rps, result[v.name]!.rps),
      })),
      targets: [
        ratioTarget('creation (api replica) ≥ 0.5× bare node+redis (one write)', ratio(shim.rps, bare.rps), 0.5),
        { target: '(info) creation (api replica) vs SDK in-memory server', value: `${ratio(shim.rps, sdk.rps)}×`, pass: null },
        ratioTarget('create+execute (all-in-one replica) ≥ 1.0× SDK in-memory server', ratio(executed, sdk.rps), 1.0),
        { target: '(info) creation (all-in-one replica) vs bare node+redis', value: `${ratio(all.rps, bare.rps)}×`, pass: null },
      ],
      notes: [
        `${API_ROW}: a replica started with --role api, the way a split deployment runs its API replicas. Each create is what durability costs: the open-task count, the task hash and the job (its id pushed on the work queue), in one Redis script. It runs no jobs; a --role worker replica started before each round runs the jobs queued so far and stops, so the measured rounds see no job execution on this machine (in production workers run on their own machines).`,
        `${ALL_ROW}: the default --role all replica, which runs each task it creates itself (docs/decisions/0032-durable-when-it-must-be.md: the record and the job's lease in one script, then the upstream call and the finishing write) in the same process while it creates, and shares the two cores with the demo upstream answering those calls. Its create+execute rate is the tasks it created (2xx) divided by the round and the time its jobs still ran after the round (median ${Math.round(median(allTails))} ms): ${Math.round(executed)} tasks/s. Non-2xx answers would be HTTP 429 -32012, its principal's default limit of 1,000 open tasks.`,
        `Before each round both queues are emptied (bounded at ${DRAIN_MAX_MS / 1000} s); that took ${Math.round(Math.max(0, ...drained) / 100) / 10} s at most. The api/worker pair uses its own Redis prefix, so the all-in-one replica's worker never takes its jobs, and SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL=${SPLIT_MAX_OPEN_TASKS}: its rounds leave every created task open until the next drain, which the default limit of 1000 would refuse (the check itself still runs on each create).`,
      ],
      raw: result,
    };
  } finally {
    await api.stop();
  }
}

/** Starts a worker replica when the api replica's queue holds jobs, waits for it to empty, and stops it. */
async function runQueuedJobs(api: Served, split: Parameters<typeof startShim>[0], log: (line: string) => void): Promise<void> {
  const backlog = await queueDepth(api.url);
  if (backlog === 0) return;
  const worker = await startShim({ ...split, role: 'worker' });
  try {
    const started = Date.now();
    await waitForEmptyQueue(api.url);
    log(`    worker replica ran ${backlog} queued jobs in ${Date.now() - started} ms`);
  } finally {
    await worker.stop();
  }
}

async function waitForEmptyQueue(shimUrl: string): Promise<void> {
  const deadline = Date.now() + DRAIN_MAX_MS;
  for (;;) {
    const depth = await queueDepth(shimUrl);
    if (depth === 0) return;
    if (Date.now() > deadline) throw new Error(`${depth} jobs still queued at ${shimUrl} after ${DRAIN_MAX_MS / 1000} s`);
    await sleep(200);
  }
}
