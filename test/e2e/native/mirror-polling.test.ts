import { Pool } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { useNativeStack } from '../../support/native-stack.js';
import { buildRequest, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const POLL_INTERVAL_MS = 500;
// Quiet: the upstream sends no notifications/tasks/status, so the mirror must poll tasks/get.
const stack = useNativeStack({ stores: STORES, upstreamArgs: ['--quiet', '--poll-interval-ms', String(POLL_INTERVAL_MS)] });
const CLIENTS = 1_000;
/** How often each client polls: faster than the upstream's pollInterval, so that a mirror per poll would show. */
const CLIENT_POLL_MS = 250;
const TERMINAL = ['completed', 'failed', 'cancelled'];
/** Requests of the task's upstream session besides its tasks/get: initialize, initialized, tools/call, tasks/result. */
const SESSION_REQUESTS = 4;

const pools: Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
});

/** `count` clients, each on a keep-alive connection of its own, polling tasks/get until the task ends. */
async function poll(url: string, taskId: string, count: number): Promise<{ last: Json; livePolls: number; seen: Set<string> }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: count, pipelining: 1 });
  pools.push(pool);
  const seen = new Set<string>();
  let livePolls = 0;
  const client = async (offset: number): Promise<Json> => {
    // Spread over one interval, as clients that started at different moments.
    await new Promise((resolve) => setTimeout(resolve, offset));
    for (;;) {
      const { headers, body } = buildRequest('tasks/get', { taskId });
      const res = await pool.request({ path: target.pathname, method: 'POST', headers, body: JSON.stringify(body) });
      const reply = (await res.body.json()) as Json;
      const task = reply?.result;
      if (res.statusCode !== 200 || !task) throw new Error(`tasks/get: HTTP ${res.statusCode} ${JSON.stringify(reply)}`);
      if (task.statusMessage) seen.add(task.statusMessage);
      if (TERMINAL.includes(task.status)) return task;
      livePolls++;
      await new Promise((resolve) => setTimeout(resolve, CLIENT_POLL_MS));
    }
  };
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => client((i * CLIENT_POLL_MS) / count)));
  return { last: answers[0], livePolls, seen };
}

const totalRequests = async (): Promise<number> => Object.values((await stack.stats()).requests).reduce((sum, n) => sum + n, 0);

// Sequential: each test counts every request the upstream received.
describe.each(STORES)('one mirror per upstream task (%s store)', (store) => {
  it(`${CLIENTS} clients polling one task over keep-alive connections cause at most one upstream request per pollInterval`, { timeout: 30_000 }, async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const beforeGets = (await stack.stats()).requests['tasks/get'] ?? 0;
    const before = await totalRequests();
    const startedAt = Date.now();
    const created = await c.createTask('native_work', { seconds: 4, label: `polled-${store}` });
    const { last, livePolls, seen } = await poll(stack.shim(store).url, created.taskId, CLIENTS);
    const elapsedMs = Date.now() - startedAt;
    const stats = await stack.stats();
    const upstreamGets = (stats.requests['tasks/get'] ?? 0) - beforeGets;
    const upstreamRequests = (await totalRequests()) - before;

    expect(textOf(last.result)).toBe(`Done polled-${store}`);
    // The clients polled the running task (at least once each on average, however loaded the machine).
    expect(livePolls).toBeGreaterThanOrEqual(CLIENTS);
    // Progress reached the clients through the mirror's tasks/get alone.
    expect([...seen].some((m) => /^Working polled-\w+: \d+%$/.test(m))).toBe(true);
    expect(upstreamGets).toBeGreaterThan(0);
    const intervals = Math.ceil(elapsedMs / POLL_INTERVAL_MS) + 1;
    expect(upstreamGets).toBeLessThanOrEqual(intervals);
    expect(upstreamRequests).toBeLessThanOrEqual(intervals + SESSION_REQUESTS);
  });
});
