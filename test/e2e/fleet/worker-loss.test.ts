import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import { fleetArgs, JOB_LOCK_MS, LOST_MESSAGE, writeFleetPolicy } from './fleet-policy.js';

// No default shim: the victim must be the only worker while the tasks start.
const stack = useStack({ stores: [] });

/**
 * A dead worker's lease lapses at most one lock after the kill, and a reclaim (every half lock on
 * each surviving worker) hands its job on: within about two locks. The grace covers a loaded host
 * picking the job up and writing the outcome.
 */
const GRACE_MS = 8_000;
const LOSS_BOUND_MS = 2 * JOB_LOCK_MS + GRACE_MS;
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe('a replica killed while it runs tasks', () => {
  it('fails its non-idempotent tasks as lost and re-runs the idempotent ones, within the bound', { timeout: 90_000 }, async () => {
    const policy = writeFleetPolicy();
    const victim = await stack.startShim({ args: fleetArgs(policy) });
    const onVictim = new Sep2663Client(victim.url);

    const slow = await Promise.all([1, 2, 3].map((n) => onVictim.createTask('slow_compute', { seconds: 120, label: `slow-${n}` })));
    const confirm = await onVictim.createTask('confirm_delete', { filename: 'lost.txt' });
    const pipelines = await Promise.all(['a1', 'b2'].map((commit) => onVictim.createTask('run_ci_pipeline', { commit, stepMs: 30 })));
    const asking = await onVictim.createTask('test_tool_with_task');

    // Each task is running on the victim (the only worker) before it dies.
    for (const t of slow) await onVictim.waitForTask(t.taskId, (task) => /^Computing slow-\d: \d+%$/.test(task.statusMessage ?? ''));
    for (const t of pipelines) await onVictim.waitForTask(t.taskId, (task) => /^Running tests \(\d+\/342\)$/.test(task.statusMessage ?? ''));
    const confirmAsked = await onVictim.waitForStatus(confirm.taskId, 'input_required');
    const firstAsk = await onVictim.waitForStatus(asking.taskId, 'input_required');
    const lostKey = Object.keys(firstAsk.inputRequests)[0] as string;

    const survivor = await stack.startShim({ args: fleetArgs(policy) });
    const onSurvivor = new Sep2663Client(survivor.url);
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');
    const killedAt = Date.now();

    const settle = (taskId: string): Promise<{ task: Json; afterMs: number }> =>
      onSurvivor
        .waitForStatus(taskId, TERMINAL, { timeoutMs: LOSS_BOUND_MS, intervalMs: 100 })
        .then((task) => ({ task, afterMs: Date.now() - killedAt }));

    // The non-idempotent ones, including the one that waited for input, end failed as lost.
    const lost = await Promise.all([...slow, confirm].map((t) => settle(t.taskId)));
    for (const { task, afterMs } of lost) {
      expect(task.status).toBe('failed');
      expect(task.error.code).toBe(-32603);
      expect(task.error.message).toMatch(LOST_MESSAGE);
      expect(task.statusMessage).toMatch(/not declared idempotent/);
      expect(afterMs).toBeLessThanOrEqual(LOSS_BOUND_MS);
    }
    expect(confirmAsked.status).toBe('input_required');

    // The idempotent one that asked for input asks again with a new key; the lost key is withdrawn.
    const secondAsk = await onSurvivor.waitForTask(
      asking.taskId,
      (task) => task.status === 'input_required' && !(lostKey in task.inputRequests),
      { timeoutMs: LOSS_BOUND_MS, intervalMs: 100 },
    );
    expect(Object.keys(secondAsk.inputRequests)).toHaveLength(1);
    const newKey = Object.keys(secondAsk.inputRequests)[0] as string;
    expect((await onSurvivor.updateTask(asking.taskId, { [newKey]: { action: 'accept', content: { user_name: 'rerun' } } })).status).toBe(200);

    const rerun = await Promise.all([...pipelines, asking].map((t) => onSurvivor.waitForStatus(t.taskId, TERMINAL, { timeoutMs: 45_000, intervalMs: 200 })));
    expect(rerun.map((task) => task.status)).toEqual(['completed', 'completed', 'completed']);
    expect(rerun.map((task) => textOf(task.result))).toEqual([
      'Pipeline passed for a1: 342 tests',
      'Pipeline passed for b2: 342 tests',
      'Task completed for rerun',
    ]);
    // The next test needs its victim to be the only worker again.
    await survivor.stop();
  });

  it('runs a task the dead replica had queued but not started, as if nothing happened', { timeout: 60_000 }, async () => {
    const policy = writeFleetPolicy();
    const victim = await stack.startShim({ args: fleetArgs(policy), env: { SHIM_WORKER_CONCURRENCY: '1' } });
    const onVictim = new Sep2663Client(victim.url);
    const busy = await onVictim.createTask('slow_compute', { seconds: 120, label: 'busy' });
    await onVictim.waitForTask(busy.taskId, (task) => /^Computing busy/.test(task.statusMessage ?? ''));
    const queued = await onVictim.createTask('slow_compute', { seconds: 0.5, label: 'queued' });
    // Its only worker slot is taken: the second task waits in the queue.
    expect((await onVictim.result('tasks/get', { taskId: queued.taskId })).statusMessage).toBeUndefined();

    victim.kill();
    await victim.stop();
    const survivor = await stack.startShim({ args: fleetArgs(policy) });
    const onSurvivor = new Sep2663Client(survivor.url);
    const done = await onSurvivor.waitForStatus(queued.taskId, TERMINAL, { timeoutMs: LOSS_BOUND_MS });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Computed queued after 0.5s');
    const lost = await onSurvivor.waitForStatus(busy.taskId, TERMINAL, { timeoutMs: LOSS_BOUND_MS });
    expect(lost.error.message).toMatch(LOST_MESSAGE);
    await survivor.stop();
  });

  it('re-runs an idempotent task once: lost again, it ends failed instead of running on', { timeout: 90_000 }, async () => {
    const policy = writeFleetPolicy();
    const step = (task: Json): number => Number(/\((\d+)\/342\)/.exec(task.statusMessage ?? '')?.[1] ?? 0);
    const first = await stack.startShim({ args: fleetArgs(policy) });
    const created = await new Sep2663Client(first.url).createTask('run_ci_pipeline', { commit: 'twice', stepMs: 100 });
    await new Sep2663Client(first.url).waitForTask(created.taskId, (task) => step(task) >= 10, { timeoutMs: 20_000 });

    const second = await stack.startShim({ args: fleetArgs(policy) });
    const onSecond = new Sep2663Client(second.url);
    first.kill();
    await first.stop();
    // The only worker left runs it again from the start.
    await onSecond.waitForTask(created.taskId, (task) => step(task) > 0 && step(task) < 10, { timeoutMs: LOSS_BOUND_MS, intervalMs: 50 });

    const third = await stack.startShim({ args: fleetArgs(policy) });
    second.kill();
    await second.stop();
    const killedAt = Date.now();
    const lost = await new Sep2663Client(third.url).waitForStatus(created.taskId, TERMINAL, { timeoutMs: LOSS_BOUND_MS, intervalMs: 100 });
    expect(Date.now() - killedAt).toBeLessThanOrEqual(LOSS_BOUND_MS);
    expect(lost.status).toBe('failed');
    expect(lost.error.message).toMatch(LOST_MESSAGE);
    expect(lost.statusMessage).toMatch(/again after a re-run/);
    await third.stop();
  });
});
