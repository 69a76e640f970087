import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useSep2663Stack({ stores: STORES });
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe('a SEP-2663 upstream that goes away mid-task', () => {
  it('ends the running task failed on every store, after bounded retries, saying the upstream became unreachable', { timeout: 60_000 }, async () => {
    const clients = STORES.map((store) => new Sep2663Client(stack.shim(store).url, { token: ALICE }));
    const created = await Promise.all(clients.map((c, i) => c.createTask('slow', { seconds: 60, label: `gone-${STORES[i]}` })));
    await pollUntil(
      async () => (await stack.stats()).tasks.filter((t) => String(t.arguments.label).startsWith('gone-')),
      (tasks) => tasks.length === STORES.length,
    );
    stack.upstream.killGroup();
    await stack.upstream.exited;
    const startedAt = Date.now();
    const done = await Promise.all(clients.map((c, i) => c.waitForStatus(created[i].taskId, TERMINAL, { timeoutMs: 30_000 })));
    for (const task of done) {
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toMatch(/^The upstream became unreachable while it ran task [\w-]+ \(5 attempts\): upstream \(tasks\/get: .+\) is unavailable/);
      expect(task.error).toEqual({ code: -32603, message: task.statusMessage });
    }
    // Five attempts with a doubling pause from 250 ms, plus a poll: seconds, not the 60 s of the task.
    expect(Date.now() - startedAt).toBeLessThan(20_000);
  });
});
