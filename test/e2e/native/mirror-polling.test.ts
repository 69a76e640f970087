import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollTask } from '../../support/pollers.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const POLL_INTERVAL_MS = 500;
// Quiet: the upstream sends no notifications/tasks/status, so the mirror must poll tasks/get.
const stack = useNativeStack({ stores: STORES, upstreamArgs: ['--quiet', '--poll-interval-ms', String(POLL_INTERVAL_MS)] });
const CLIENTS = 1_000;
/** How often each client polls: faster than the upstream's pollInterval, so that a mirror per poll would show. */
const CLIENT_POLL_MS = 250;
/** What the upstream received, by method. */
const requests = async (): Promise<Record<string, number>> => (await stack.stats()).requests;

// Sequential: each test counts every request the upstream received.
describe.each(STORES)('one mirror per upstream task (%s store)', (store) => {
  it(`${CLIENTS} clients polling one task over keep-alive connections cause at most one upstream request per pollInterval`, { timeout: 30_000 }, async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const before = await requests();
    const startedAt = Date.now();
    const created = await c.createTask('native_work', { seconds: 6, label: `polled-${store}` });
    const { last, livePolls, seen } = await pollTask(stack.shim(store).url, created.taskId, { clients: CLIENTS, intervalMs: CLIENT_POLL_MS });
    const elapsedMs = Date.now() - startedAt;
    const after = await requests();
    const sent = (method: string): number => (after[method] ?? 0) - (before[method] ?? 0);
    const upstreamGets = sent('tasks/get');

    expect(textOf(last.result)).toBe(`Done polled-${store}`);
    // The clients polled the running task hundreds of times (how often depends on the host's load).
    expect(livePolls).toBeGreaterThanOrEqual(CLIENTS / 2);
    // Progress reached the clients through the mirror's tasks/get alone.
    expect([...seen].some((m) => /^Working polled-\w+: \d+%$/.test(m))).toBe(true);
    expect(upstreamGets).toBeGreaterThan(0);
    const intervals = Math.ceil(elapsedMs / POLL_INTERVAL_MS) + 1;
    expect(upstreamGets).toBeLessThanOrEqual(intervals);
    // Besides its polls, the mirror's session sent the call and one tasks/result, whatever the clients did.
    expect(sent('tools/call')).toBe(1);
    expect(sent('tasks/result')).toBe(1);
    expect(sent('tasks/cancel')).toBe(0);
  });
});
