import { afterEach, describe, expect, it } from 'vitest';
import { LegacySession } from '../../support/legacy-client.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollUntil, Sep2663Client, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

// Replicas are started per test, so that the first one is the only worker when its task starts.
const stack = useNativeStack({ stores: [], shimArgs: ['--job-lock-ms', '3000'] });
const GRACE_MS = 5_000;

/** Every replica a test starts is stopped after it, failed or not: a survivor would resume the next test's job. */
const started: ShimProcess[] = [];
async function replica(args?: string[]): Promise<ShimProcess> {
  const shim = await stack.startShim(args);
  started.push(shim);
  return shim;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((shim) => shim.stop()));
});
const CONFIRMED = 'Cancelled by the client; the upstream confirmed.';

/** Starts a long native task on `shim` and waits until its mirror runs (the upstream's progress shows). */
async function mirroredTask(shim: ShimProcess, label: string): Promise<string> {
  const c = new Sep2663Client(shim.url);
  const created = await c.createTask('native_work', { seconds: 60, label });
  await c.waitForTask(created.taskId, (t) => (t.statusMessage ?? '').startsWith(`Working ${label}`), { timeoutMs: 15_000 });
  return created.taskId as string;
}

const upstreamTask = async (label: string) => (await stack.stats()).tasks.find((t) => t.arguments?.label === label);
const upstreamCancels = async (): Promise<number> => (await stack.stats()).requests['tasks/cancel'] ?? 0;

// Sequential: each test owns the fleet's workers while it runs.
describe('cancelling an upstream-backed task on a fleet (Redis, two replicas)', () => {
  it('a 2025-11-25 tasks/cancel on another replica than the mirror answers the cancelled task once the upstream confirmed', { timeout: 60_000 }, async () => {
    const mirror = await replica();
    const label = 'fleet-confirmed';
    const taskId = await mirroredTask(mirror, label);
    const other = await replica();
    const session = await LegacySession.open(other.url);
    const answered = await session.result('tasks/cancel', { taskId });
    expect(answered).toMatchObject({ taskId, status: 'cancelled', statusMessage: CONFIRMED });
    expect((await upstreamTask(label))?.status).toBe('cancelled');
  });

  it('concurrent cancels on both replicas and all wires end the task once, with one upstream tasks/cancel', { timeout: 60_000 }, async () => {
    const mirror = await replica();
    const label = 'fleet-concurrent';
    const taskId = await mirroredTask(mirror, label);
    const other = await replica();
    const before = await upstreamCancels();
    const legacy = await Promise.all([mirror, other, mirror, other].map((shim) => LegacySession.open(shim.url)));
    const dialect = await Promise.all([mirror, other].map((shim) => LegacySession.open(shim.url)));
    const sep = [mirror, other, mirror, other].map((shim) => new Sep2663Client(shim.url));
    // The dialect sessions say which wire they speak before they cancel.
    await Promise.all(dialect.map((session) => session.result('tasks/create', { name: 'native_quick', arguments: { text: 'marks the dialect' } })));

    const [legacyAnswers, dialectAnswers, sepAnswers] = await Promise.all([
      Promise.all(legacy.map((session) => session.request('tasks/cancel', { taskId }))),
      Promise.all(dialect.map((session) => session.result('tasks/cancel', { taskId }))),
      Promise.all(sep.map((c) => c.cancelTask(taskId))),
    ]);

    // Every 2025-11-25 answer is the cancelled task, or (a cancel that arrived after the end) -32602 naming it
    // cancelled: which wire's cancel lands first, and whether the end comes before the others, is the host's scheduling.
    for (const answer of legacyAnswers as Json[]) {
      if (answer.error) expect(answer.error).toEqual({ code: -32602, message: "Cannot cancel task: already in terminal status 'cancelled'" });
      else expect(answer.result).toMatchObject({ taskId, status: 'cancelled', statusMessage: CONFIRMED });
    }
    for (const answer of dialectAnswers as Json[]) expect(['running', 'error']).toContain(answer.status);
    for (const reply of sepAnswers) expect(reply.body.result).toMatchObject({ resultType: 'complete' });

    const ended = await new Sep2663Client(other.url).waitForStatus(taskId, 'cancelled', { timeoutMs: GRACE_MS });
    expect(ended.statusMessage).toBe(CONFIRMED);
    expect((await upstreamTask(label))?.status).toBe('cancelled');
    expect((await upstreamCancels()) - before).toBe(1);
  });

  it('a cancel while no mirror runs (its replica killed) ends the task cancelled within the grace; a later worker still cancels the upstream task', { timeout: 90_000 }, async () => {
    const victim = await replica();
    const label = 'fleet-dead-mirror';
    const taskId = await mirroredTask(victim, label);
    // An api replica runs no jobs: nothing resumes the mirror while the cancel waits.
    const api = await replica(['--role', 'api']);
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');

    const session = await LegacySession.open(api.url);
    const startedAt = Date.now();
    const answered = await session.result('tasks/cancel', { taskId });
    const tookMs = Date.now() - startedAt;
    expect(answered).toMatchObject({ taskId, status: 'cancelled', statusMessage: `Cancelled by the client; the upstream did not confirm within ${GRACE_MS} ms.` });
    expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS);
    expect(tookMs).toBeLessThan(GRACE_MS + 4_000);
    expect((await upstreamTask(label))?.status).toBe('working');

    // The job's lease lapses; the worker that takes it finds the record cancelled and tells the upstream.
    await replica(['--role', 'worker']);
    const cancelled = await pollUntil(() => upstreamTask(label), (t) => t?.status === 'cancelled', { timeoutMs: 30_000, intervalMs: 200 });
    expect(cancelled?.status).toBe('cancelled');
  });
});
