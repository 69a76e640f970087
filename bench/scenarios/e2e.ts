/** End-to-end task overhead, instant tool: create → completed → result read, one task at a time. */
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { post, rpcOf } from '../lib/http.js';
import { legacy, openLegacySession, sep2663 } from '../lib/mcp.js';
import { percentile, ratio, round } from '../lib/stats.js';
import { figureTarget } from '../lib/target.js';

const TASKS = 200;
const PER_TASK_MAX_MS = 5_000;
const TOTAL_MAX_MS = 40_000;
const DRAIN_MAX_MS = 120_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(url: string, req: { headers: Record<string, string>; body: string }): Promise<any> {
  const rpc = rpcOf(await post(url, req.headers, req.body));
  if (!rpc || rpc.result === undefined) throw new Error(`no result from ${url}: ${JSON.stringify(rpc)}`);
  return rpc.result;
}

interface Run {
  ms: number[];
  polls: number[];
  /** Server side: the task's lastUpdatedAt − createdAt (create → finished), ms resolution. */
  server: number[];
}

type One = { ms: number; polls: number; server: number };

async function shimTask(url: string, i: number): Promise<One> {
  const t0 = process.hrtime.bigint();
  const created = await call(url, sep2663('tools/call', { name: 'greet', arguments: { name: `e2e-${i}` } }));
  const deadline = Date.now() + PER_TASK_MAX_MS;
  for (let polls = 1; Date.now() < deadline; polls++) {
    const task = await call(url, sep2663('tasks/get', { taskId: created.taskId }));
    // The completed DetailedTask carries the CallToolResult inline: this read is the result read.
    if (task.status === 'completed' && task.result) {
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, polls, server: Date.parse(task.lastUpdatedAt) - Date.parse(task.createdAt) };
    }
  }
  throw new Error(`task ${created.taskId} did not complete within ${PER_TASK_MAX_MS} ms`);
}

async function sdkTask(url: string, session: string, i: number): Promise<One> {
  const t0 = process.hrtime.bigint();
  const created = await call(url, legacy('tools/call', { name: 'greet', arguments: { name: `e2e-${i}` }, task: { ttl: 60_000 } }, session));
  const deadline = Date.now() + PER_TASK_MAX_MS;
  for (let polls = 1; Date.now() < deadline; polls++) {
    const task = await call(url, legacy('tasks/get', { taskId: created.task.taskId }, session));
    if (task.status === 'completed') {
      await call(url, legacy('tasks/result', { taskId: created.task.taskId }, session));
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, polls, server: Date.parse(task.lastUpdatedAt) - Date.parse(task.createdAt) };
    }
  }
  throw new Error(`SDK task ${created.task.taskId} did not complete`);
}

async function loop(run: (i: number) => Promise<One>): Promise<Run> {
  const out: Run = { ms: [], polls: [], server: [] };
  const deadline = Date.now() + TOTAL_MAX_MS;
  for (let i = 0; i < TASKS && Date.now() < deadline; i++) {
    const r = await run(i);
    if (i >= 10) {
      out.ms.push(r.ms);
      out.polls.push(r.polls);
      out.server.push(r.server);
    }
  }
  return out;
}

/** Jobs queued by an earlier load (the creation scenario) run first: wait until a new task runs at once. */
async function drain(url: string, log: (line: string) => void): Promise<number> {
  const started = Date.now();
  const created = await call(url, sep2663('tools/call', { name: 'greet', arguments: { name: 'drain' } }));
  while (Date.now() - started < DRAIN_MAX_MS) {
    const task = await call(url, sep2663('tasks/get', { taskId: created.taskId }));
    if (task.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const waited = Date.now() - started;
  log(`    queue drained: a new task completed after ${waited} ms`);
  return waited;
}

export async function endToEnd(ctx: BenchContext): Promise<ScenarioResult> {
  const drainedMs = await drain(ctx.shim.url, ctx.log);
  const shim = await loop((i) => shimTask(ctx.shim.url, i));
  const session = await openLegacySession(ctx.sdk.url, { tasks: {} });
  const sdk = await loop((i) => sdkTask(ctx.sdk.url, session, i));
  const row = (variant: string, r: Run) => ({
    variant,
    tasks: r.ms.length,
    'p50 ms': round(percentile(r.ms, 50), 2),
    'p99 ms': round(percentile(r.ms, 99), 2),
    'server create→finished p50 ms': percentile(r.server, 50),
    'server p99 ms': percentile(r.server, 99),
    'polls p50': percentile(r.polls, 50),
    'polls p99': percentile(r.polls, 99),
  });
  ctx.log(`    shim p50 ${round(percentile(shim.ms, 50), 2)} ms p99 ${round(percentile(shim.ms, 99), 2)} ms; SDK p50 ${round(percentile(sdk.ms, 50), 2)} ms`);
  return {
    name: 'e2e',
    title: 'End-to-end task, instant tool (create → completed → result read)',
    rows: [row('shim (Redis, 2026-07-28 wire)', shim), row('SDK in-memory task server (tasks/get + tasks/result)', sdk)],
    targets: [
      figureTarget(
        'end-to-end task p50 ≤ 1.5× the SDK in-memory task server',
        `${ratio(percentile(shim.ms, 50), percentile(sdk.ms, 50))}× (${round(percentile(shim.ms, 50), 2)} vs ${round(percentile(sdk.ms, 50), 2)} ms; shim p99 ${round(percentile(shim.ms, 99), 2)} ms)`,
        { value: ratio(percentile(shim.ms, 50), percentile(sdk.ms, 50)), atMost: 1.5 },
      ),
    ],
    notes: [`Before measuring, the jobs left queued by the creation load drained: a first task completed after ${drainedMs} ms.`, `${TASKS} tasks one after another (first 10 dropped as warm-up); the client re-polls tasks/get at once until completed; bounded to ${TOTAL_MAX_MS / 1000} s per variant.`],
    raw: { shim, sdk },
  };
}
