/** Durable task creation (tools/call → CreateTaskResult) per second vs the same two baselines. */
import { compare } from '../lib/compare.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { legacy, mustResult, openLegacySession, sep2663 } from '../lib/mcp.js';
import { sleep } from '../lib/proc.js';
import { ratio } from '../lib/stats.js';

export async function createTasks(ctx: BenchContext): Promise<ScenarioResult> {
  const shimReq = sep2663('tools/call', { name: 'greet', arguments: { name: 'bench' } });
  const probe = await mustResult(ctx.shim.url, shimReq);
  if (probe.resultType !== 'task') throw new Error(`greet did not create a task: ${JSON.stringify(probe)}`);
  const session = await openLegacySession(ctx.sdk.url, { tasks: {} });
  const sdkReq = legacy('tools/call', { name: 'greet', arguments: { name: 'bench' }, task: { ttl: 60_000 } }, session);
  await mustResult(ctx.sdk.url, sdkReq);
  const base = { connections: ctx.connections, durationS: ctx.durationS };
  const variants = [
    { name: 'shim (Redis + BullMQ)', spec: { ...base, url: ctx.shim.url, headers: shimReq.headers, body: shimReq.body } },
    { name: 'SDK in-memory task server', spec: { ...base, url: ctx.sdk.url, headers: sdkReq.headers, body: sdkReq.body } },
    { name: 'bare node:http + 1 Redis SET', spec: { ...base, url: `${ctx.bare.url}/create`, headers: { 'content-type': 'application/json' }, body: shimReq.body } },
  ];
  // The shim runs each created task's job (an upstream call) in the background; let it drain.
  const result = await compare(variants, { rounds: ctx.rounds, warmupS: 1, log: ctx.log, between: () => sleep(3_000) });
  const shim = result['shim (Redis + BullMQ)']!;
  const bare = result['bare node:http + 1 Redis SET']!;
  const sdk = result['SDK in-memory task server']!;
  return {
    name: 'create',
    title: 'Durable task creation (tools/call → CreateTaskResult, instant tool)',
    rows: variants.map((v) => ({
      variant: v.name,
      'creates/s (median)': result[v.name]!.rps,
      'p50 ms': result[v.name]!.p50,
      'p99 ms': result[v.name]!.p99,
      'shim ÷ this': v.name.startsWith('shim') ? '—' : ratio(shim.rps, result[v.name]!.rps),
    })),
    targets: [
      { target: 'creation ≥ 0.5× bare node+redis (one write)', value: `${ratio(shim.rps, bare.rps)}×`, pass: shim.rps >= 0.5 * bare.rps },
      { target: '(info) creation vs SDK in-memory server', value: `${ratio(shim.rps, sdk.rps)}×`, pass: null },
    ],
    notes: [
      'The shim side includes what durability costs it: task hash + BullMQ job enqueue per create; its worker runs the jobs (one upstream call each) in the same process meanwhile. 3 s pause before each round lets that backlog drain.',
    ],
    raw: result,
  };
}
