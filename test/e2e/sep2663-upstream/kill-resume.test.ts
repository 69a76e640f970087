import { describe, expect, it } from 'vitest';
import { pollUntil, Sep2663Client, textOf } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';

// No default shim: the victim must be the only worker while the tasks start.
const stack = useSep2663Stack({ stores: [], shimArgs: ['--job-lock-ms', '3000'] });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const GRACE_MS = 5_000;

describe('kill -9 of the replica that mirrors SEP-2663 upstream tasks (Redis)', () => {
  it('another replica resumes each mirror from the record: the tasks end with their real results, nothing re-runs', { timeout: 90_000 }, async () => {
    const victim = await stack.startShim();
    const onVictim = new Sep2663Client(victim.url, { token: ALICE, capabilities: { elicitation: {} } });
    const work = await onVictim.createTask('slow', { seconds: 8, label: 'survivor' });
    const approve = await onVictim.createTask('approve', { item: 'kept-across-kill' });
    await onVictim.waitForTask(work.taskId, (t) => t.statusMessage === 'Working survivor');
    const asking = await onVictim.waitForStatus(approve.taskId, 'input_required');
    const key = Object.keys(asking.inputRequests)[0] as string;

    const survivor = await stack.startShim();
    const onSurvivor = new Sep2663Client(survivor.url, { token: ALICE, capabilities: { elicitation: {} } });
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');

    // Answered while no replica mirrors the task: the answer waits in the record for the resumed mirror.
    expect((await onSurvivor.updateTask(approve.taskId, { [key]: { action: 'accept', content: { approve: true } } })).status).toBe(200);

    const [worked, approved] = await Promise.all(
      [work, approve].map((t) => onSurvivor.waitForStatus(t.taskId, TERMINAL, { timeoutMs: 45_000, intervalMs: 200 })),
    );
    expect(worked.status).toBe('completed');
    expect(textOf(worked.result)).toBe('Done survivor');
    expect(approved.status).toBe('completed');
    expect(textOf(approved.result)).toBe('Approved kept-across-kill');

    // One upstream task each: the survivor followed the running ones instead of calling the tools again.
    const upstream = (await stack.stats()).tasks;
    expect(upstream.filter((t) => t.arguments.label === 'survivor').map((t) => t.status)).toEqual(['completed']);
    expect(upstream.filter((t) => t.arguments.item === 'kept-across-kill').map((t) => t.status)).toEqual(['completed']);
    // No worker of this test may resume a later test's mirror.
    await survivor.stop();
  });

  it('a replica stopped gracefully mid-task leaves the upstream task to another replica, which finishes it', { timeout: 90_000 }, async () => {
    const leaving = await stack.startShim(['--shutdown-grace-ms', '500']);
    const onLeaving = new Sep2663Client(leaving.url, { token: ALICE });
    const work = await onLeaving.createTask('slow', { seconds: 6, label: 'rolled' });
    await onLeaving.waitForTask(work.taskId, (t) => t.statusMessage === 'Working rolled');

    const staying = await stack.startShim();
    const onStaying = new Sep2663Client(staying.url, { token: ALICE });
    expect((await leaving.stop('SIGTERM')).code).toBe(0);

    const done = await onStaying.waitForStatus(work.taskId, TERMINAL, { timeoutMs: 45_000, intervalMs: 200 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Done rolled');
    expect((await stack.stats()).tasks.filter((t) => t.arguments.label === 'rolled').map((t) => t.status)).toEqual(['completed']);
    await staying.stop();
  });
  it('a cancel while the mirroring replica is dead ends the record unconfirmed; the worker that takes the job cancels the upstream task', { timeout: 90_000 }, async () => {
    const victim = await stack.startShim();
    const onVictim = new Sep2663Client(victim.url, { token: ALICE });
    const work = await onVictim.createTask('slow', { seconds: 60, label: 'cancelled-while-dead' });
    await onVictim.waitForTask(work.taskId, (t) => t.statusMessage === 'Working cancelled-while-dead');
    // An api replica runs no jobs: nothing resumes the mirror while the cancel waits.
    const api = await stack.startShim(['--role', 'api']);
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');

    const onApi = new Sep2663Client(api.url, { token: ALICE });
    expect((await onApi.cancelTask(work.taskId)).status).toBe(200);
    const ended = await onApi.waitForStatus(work.taskId, TERMINAL, { timeoutMs: GRACE_MS + 5_000, intervalMs: 200 });
    expect(ended).toMatchObject({ status: 'cancelled', statusMessage: `Cancelled by the client; the upstream did not confirm within ${GRACE_MS} ms.` });
    const upstreamTask = async () => (await stack.stats()).tasks.find((t) => t.arguments.label === 'cancelled-while-dead');
    expect((await upstreamTask())?.status).toBe('working');

    // The job's lease lapses; the worker that takes it finds the record cancelled and tells the upstream, statelessly.
    const worker = await stack.startShim(['--role', 'worker']);
    const cancelled = await pollUntil(upstreamTask, (t) => t?.status === 'cancelled', { timeoutMs: 30_000, intervalMs: 200 });
    expect(cancelled?.cancels).toBe(1);
    await Promise.all([api.stop(), worker.stop()]);
  });
});
