import { describe, expect, it } from 'vitest';
import { useBadUpstreamStack } from '../../support/bad-upstream-stack.js';
import type { StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

// The cancel of a task an upstream task backs ends with the upstream's answer (docs/decisions/0024).
const STORES: StoreKind[] = ['redis', 'embedded'];
const TERMINAL = ['completed', 'failed', 'cancelled'];
const GRACE_MS = 5_000;
const UNCONFIRMED = `Cancelled by the client; the upstream did not confirm within ${GRACE_MS} ms.`;
const stack = useBadUpstreamStack(STORES);

/** The mirror runs (the record is bound to its upstream task) once the upstream's statusMessage shows. */
const mirrored = (task: Json): boolean => task.statusMessage === 'Working';

describe.concurrent.each(STORES)('a cancel that the upstream answers its own way (%s store)', (store) => {
  const url = (): string => stack.shim(store).url;

  it('SEP-2663: acks at once; a task the upstream finished first ends completed with its real result', async () => {
    const c = new Sep2663Client(url());
    const created = await c.createTask('cancel_too_late');
    await c.waitForTask(created.taskId, mirrored);
    const ack = await c.cancelTask(created.taskId);
    expect(ack.status).toBe(200);
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Finished before the cancel');
  });

  it("2025-11-25: a task the upstream finished first answers -32602 naming 'completed', and keeps its result", async () => {
    const session = await LegacySession.open(url());
    const { task } = await session.result('tools/call', { name: 'cancel_too_late', arguments: {}, task: { ttl: 60_000 } });
    await pollUntil(() => session.result('tasks/get', { taskId: task.taskId }), mirrored);
    const refused = await session.request('tasks/cancel', { taskId: task.taskId });
    expect(refused.error).toEqual({ code: -32602, message: "Cannot cancel task: already in terminal status 'completed'" });
    expect((await session.result('tasks/get', { taskId: task.taskId })).status).toBe('completed');
    expect(textOf(await session.result('tasks/result', { taskId: task.taskId }))).toBe('Finished before the cancel');
  });

  it('2025-11-25: an upstream that never confirms gets the cancelled task within the grace, saying so', async () => {
    const session = await LegacySession.open(url());
    const { task } = await session.result('tools/call', { name: 'cancel_ignored', arguments: {}, task: { ttl: 60_000 } });
    await pollUntil(() => session.result('tasks/get', { taskId: task.taskId }), mirrored);
    const startedAt = Date.now();
    const cancelled = await session.result('tasks/cancel', { taskId: task.taskId });
    const tookMs = Date.now() - startedAt;
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled', statusMessage: UNCONFIRMED });
    expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS - 200);
    expect(tookMs).toBeLessThan(GRACE_MS + 4_000);
    expect(await session.result('tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'cancelled', statusMessage: UNCONFIRMED });
  });

  it('tasks/create dialect: answers the task as recorded (still running, awaiting the upstream), which then ends cancelled', async () => {
    const session = await LegacySession.open(url());
    const created = await session.result('tasks/create', { name: 'cancel_ignored', arguments: {} });
    await pollUntil(() => session.result('tasks/status', { taskId: created.taskId }), mirrored);
    const answered = await session.result('tasks/cancel', { taskId: created.taskId });
    expect(answered).toMatchObject({ taskId: created.taskId, status: 'running', statusMessage: 'Cancel requested; waiting for the upstream to confirm.' });
    const ended = await pollUntil(() => session.result('tasks/status', { taskId: created.taskId }), (t) => t.status !== 'running', { timeoutMs: GRACE_MS + 5_000 });
    expect(ended).toMatchObject({ status: 'error', statusMessage: UNCONFIRMED, error: { code: -32800, data: { status: 'cancelled' } } });
  });
});
