/** Redis memory per finished task, and keys left after TTL expiry (SHIM_DEFAULT_TTL_MS=2000). */
import { Redis } from 'ioredis';
import { taskKey } from '../../src/store/redis/keys.js';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { post, rpcOf } from '../lib/http.js';
import { mustResult, sep2663 } from '../lib/mcp.js';
import { sleep, type Served } from '../lib/proc.js';
import { startRedis, startShim, type RedisServer } from '../lib/servers.js';
import { median, round } from '../lib/stats.js';
import { figureTarget } from '../lib/target.js';

const TASKS = 1_000;
const TTL_TASKS = 200;

function getRequest(taskId: string): [Record<string, string>, string] {
  const { headers, body } = sep2663('tasks/get', { taskId });
  return [headers, body];
}

/**
 * Creates `n` instant tasks (16 at a time) and waits for each to complete. With `expiring`, a task
 * that expires before it is seen completed (a 2 s TTL on a loaded host) counts as done.
 */
async function createFinished(url: string, n: number, tag: string, expiring = false): Promise<Array<{ taskId: string; args: Record<string, unknown>; result: unknown }>> {
  const out: Array<{ taskId: string; args: Record<string, unknown>; result: unknown }> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const args = { name: `${tag}-${i}` };
      const created = await mustResult(url, sep2663('tools/call', { name: 'greet', arguments: args }));
      const deadline = Date.now() + 10_000;
      for (;;) {
        const reply = rpcOf(await post(url, ...getRequest(created.taskId as string)));
        if (expiring && reply?.error && /not found/i.test(String(reply.error.message))) {
          out.push({ taskId: created.taskId as string, args, result: undefined });
          break;
        }
        const task = reply?.result;
        if (!task) throw new Error(`tasks/get failed: ${JSON.stringify(reply)}`);
        if (task.status === 'completed') {
          const { resultType: _rt, ...result } = task.result as Record<string, unknown>;
          out.push({ taskId: created.taskId as string, args, result });
          break;
        }
        if (Date.now() > deadline) throw new Error(`task ${created.taskId} did not complete`);
        await sleep(20);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return out;
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

/**
 * Redis's used_memory less what the traffic aggregates (`…:obs:…` minute and hour buckets) take:
 * those grow with time and traffic, not with tasks, and a new minute bucket that opens during the
 * measurement would be charged to the tasks.
 */
async function taskMemory(redis: Redis): Promise<number> {
  let aggregates = 0;
  for (const key of (await allKeys(redis)).filter((k) => k.includes(':obs:'))) {
    aggregates += Number((await redis.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
  }
  return (await usedMemory(redis)) - aggregates;
}

async function allKeys(redis: Redis): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

async function withShim<T>(ctx: BenchContext, env: Record<string, string>, fn: (shim: Served, redis: Redis, server: RedisServer) => Promise<T>): Promise<T> {
  const server = await startRedis();
  const shim = await startShim({ upstream: ctx.upstream.url, redis: server.url, policy: ctx.policy, env });
  const redis = new Redis(server.url);
  try {
    return await fn(shim, redis, server);
  } finally {
    await redis.quit();
    await shim.stop();
    await server.stop();
  }
}

export async function memory(ctx: BenchContext): Promise<ScenarioResult> {
  const mem = await withShim(ctx, {}, async (shim, redis) => {
    await createFinished(shim.url, 20, 'warm');
    await sleep(500);
    const before = await taskMemory(redis);
    const tasks = await createFinished(shim.url, TASKS, 'mem');
    await sleep(1_000); // the queue ends completed jobs; observability buckets settle
    const after = await taskMemory(redis);
    const usage: number[] = [];
    const payload: number[] = [];
    for (const t of tasks) {
      usage.push(Number(await redis.memory('USAGE', taskKey('mts', t.taskId), 'SAMPLES', '0')));
      payload.push(Buffer.byteLength(JSON.stringify(t.result)) + Buffer.byteLength(JSON.stringify(t.args)));
    }
    const sample = await redis.hgetall(taskKey('mts', tasks[0]!.taskId));
    const fieldBytes = Object.entries(sample).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    return {
      perTaskDelta: round((after - before) / TASKS, 0),
      keyUsage: median(usage),
      payload: median(payload),
      fields: Object.keys(sample).length,
      fieldBytes,
      sampleFields: Object.fromEntries(Object.entries(sample).map(([k, v]) => [k, v.length > 80 ? `${v.slice(0, 80)}…` : v])),
    };
  });
  ctx.log(`    per task: used_memory Δ ${mem.perTaskDelta} B, MEMORY USAGE ${mem.keyUsage} B, payload ${mem.payload} B`);

  const ttl = await withShim(ctx, { SHIM_DEFAULT_TTL_MS: '2000' }, async (shim, redis) => {
    await createFinished(shim.url, 5, 'ttl-warm', true);
    await sleep(3_000);
    const before = new Set(await allKeys(redis));
    const tasks = await createFinished(shim.url, TTL_TASKS, 'ttl', true);
    const ids = tasks.map((t) => t.taskId);
    const duringKeys = (await allKeys(redis)).filter((k) => !before.has(k)).length;
    // Expiry is 2 s after the last task's creation; wait it out, then give Redis up to 10 s more.
    await sleep(2_500);
    let left: string[];
    const deadline = Date.now() + 10_000;
    do {
      left = (await allKeys(redis)).filter((k) => !before.has(k));
      if (left.filter((k) => ids.some((id) => k.includes(id))).length === 0) break;
      await sleep(500);
    } while (Date.now() < deadline);
    const withIds = left.filter((k) => ids.some((id) => k.includes(id)));
    const patterns = new Map<string, number>();
    for (const k of left) {
      const p = ids.reduce((s, id) => s.replaceAll(id, '<id>'), k).replace(/\d{6,}/g, '<n>');
      patterns.set(p, (patterns.get(p) ?? 0) + 1);
    }
    // Traffic aggregates (`…:obs:…` time buckets) are recorded per minute whatever the tasks; they
    // have their own retention and are not task state.
    const taskState = left.filter((k) => !k.includes(':obs:'));
    return { duringKeys, left: left.length, taskState: taskState.length, withIds: withIds.length, patterns: Object.fromEntries(patterns) };
  });
  ctx.log(`    TTL: ${ttl.duringKeys} new keys while live, ${ttl.left} new keys after expiry (${ttl.withIds} naming a task id)`);

  const overhead = mem.perTaskDelta - mem.payload;
  const keyOverhead = mem.keyUsage - mem.payload;
  return {
    name: 'memory',
    title: 'Redis memory per finished task; keys left after TTL expiry',
    rows: [
      {
        variant: 'shim',
        'used_memory Δ / task B (aggregates excluded)': mem.perTaskDelta,
        'MEMORY USAGE task hash B': mem.keyUsage,
        'payload (args + result JSON) B': mem.payload,
        'beyond payload (Δ) B': overhead,
        'beyond payload (hash) B': keyOverhead,
        'task hash fields': mem.fields,
        'new keys while live': ttl.duringKeys,
        'keys left after expiry': ttl.left,
        'of them naming a task': ttl.withIds,
      },
    ],
    targets: [
      figureTarget('≤ 1 KiB Redis per finished task beyond its payload (used_memory Δ)', `${overhead} B (task hash alone: ${keyOverhead} B)`, { value: overhead, atMost: 1024 }),
      {
        target: 'zero keys after TTL expiry',
        value: `${ttl.withIds} keys naming a task, ${ttl.taskState} other non-aggregate keys (${ttl.left - ttl.taskState} traffic-aggregate buckets)`,
        pass: ttl.withIds === 0 && ttl.taskState === 0,
      },
    ],
    notes: [
      `${TASKS} finished \`greet\` tasks on a fresh Redis (used_memory before/after, less the MEMORY USAGE of the traffic-aggregate buckets, which grow with time rather than tasks; MEMORY USAGE … SAMPLES 0 on each task hash; medians). TTL check: a second fresh Redis and shim with SHIM_DEFAULT_TTL_MS=2000, ${TTL_TASKS} tasks, keys compared with the set present before them.`,
      `Keys left after expiry by pattern: ${JSON.stringify(ttl.patterns)}`,
      `A task hash: ${JSON.stringify(mem.sampleFields)}`,
    ],
    raw: { mem, ttl },
  };
}
