import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollUntil, Sep2663Client, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const UPSTREAM_TTL_MS = 2_000;
const stack = useNativeStack({ stores: STORES, upstreamArgs: ['--max-ttl-ms', String(UPSTREAM_TTL_MS)] });
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe.concurrent.each(STORES)('an upstream whose task TTL is shorter than the shim task (%s store)', (store) => {
  it('keeps the result for the shim task TTL after the upstream dropped its task', async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const label = `short-ttl-${store}`;
    const created = await c.createTask('native_work', { seconds: 0.5, label });
    expect(created.ttlMs).toBeGreaterThan(UPSTREAM_TTL_MS);
    expect((await c.waitForStatus(created.taskId, TERMINAL)).status).toBe('completed');
    await pollUntil(
      async () => (await stack.stats()).tasks.some((t) => t.arguments?.label === label),
      (present) => !present,
      { timeoutMs: 10_000 },
    );
    const later = await c.result('tasks/get', { taskId: created.taskId });
    expect(later.status).toBe('completed');
    expect(textOf(later.result)).toBe(`Done ${label}`);
  });

  it('fails, saying the upstream lost it, a task the upstream dropped at its TTL while it ran', async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const created = await c.createTask('native_work', { seconds: 6, label: `dropped-${store}` });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toMatch(/^The upstream no longer knows task \w+ \(tasks\/(get|result): -32602 Task not found/);
  });
});
