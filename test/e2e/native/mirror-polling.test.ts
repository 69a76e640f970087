import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollTogether, Sep2663Client, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const POLL_INTERVAL_MS = 500;
// Quiet: the upstream sends no notifications/tasks/status, so the mirror must poll tasks/get.
const stack = useNativeStack({ stores: STORES, upstreamArgs: ['--quiet', '--poll-interval-ms', String(POLL_INTERVAL_MS)] });
const CLIENTS = 50;

// Sequential: each test counts every tasks/get the upstream received.
describe.each(STORES)('one mirror per upstream task (%s store)', (store) => {
  it(`${CLIENTS} clients polling one task cause at most one upstream tasks/get per pollInterval`, { timeout: 60_000 }, async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const before = (await stack.stats()).requests['tasks/get'] ?? 0;
    const startedAt = Date.now();
    const created = await c.createTask('native_work', { seconds: 3, label: `polled-${store}` });
    const { done, seen } = await pollTogether(c, created.taskId, CLIENTS);
    const elapsedMs = Date.now() - startedAt;
    const upstreamGets = ((await stack.stats()).requests['tasks/get'] ?? 0) - before;

    expect(textOf(done.result)).toBe(`Done polled-${store}`);
    // Progress reached the clients through the mirror's tasks/get alone.
    expect([...seen].some((m) => /^Working polled-\w+: \d+%$/.test(m))).toBe(true);
    expect(upstreamGets).toBeGreaterThan(0);
    expect(upstreamGets).toBeLessThanOrEqual(Math.ceil(elapsedMs / POLL_INTERVAL_MS) + 1);
  });
});
