import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { pollTask } from '../../support/pollers.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const POLL_INTERVAL_MS = 500;
const stack = useSep2663Stack({ stores: STORES, upstreamArgs: ['--poll-interval-ms', String(POLL_INTERVAL_MS)] });
const CLIENTS = 50;
/** How often each client polls: faster than the upstream's pollInterval, so that a mirror per poll would show. */
const CLIENT_POLL_MS = 100;

// Sequential: each test counts every tasks/get the upstream received.
describe.each(STORES)('one mirror per SEP-2663 upstream task (%s store)', (store) => {
  it(`${CLIENTS} clients polling one task cause at most one upstream tasks/get per pollInterval`, { timeout: 60_000 }, async () => {
    const c = new Sep2663Client(stack.shim(store).url, { token: ALICE });
    const label = `polled-${store}`;
    const before = (await stack.stats()).requests['tasks/get'] ?? 0;
    const startedAt = Date.now();
    const created = await c.createTask('slow', { seconds: 3, label });
    const { last: done, seen } = await pollTask(stack.shim(store).url, created.taskId, { clients: CLIENTS, intervalMs: CLIENT_POLL_MS, token: ALICE });
    const elapsedMs = Date.now() - startedAt;
    const upstreamGets = ((await stack.stats()).requests['tasks/get'] ?? 0) - before;

    expect(textOf(done.result)).toBe(`Done ${label}`);
    expect(seen.has(`Working ${label}`)).toBe(true);
    expect(upstreamGets).toBeGreaterThan(0);
    expect(upstreamGets).toBeLessThanOrEqual(Math.ceil(elapsedMs / POLL_INTERVAL_MS) + 1);
  });
});
