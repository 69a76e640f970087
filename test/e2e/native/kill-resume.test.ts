import { describe, expect, it } from 'vitest';
import { inTaskInputArgs, useNativeStack } from '../../support/native-stack.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';

// No default shim: the victim must be the only worker while the tasks start.
const stack = useNativeStack({ stores: [], shimArgs: ['--job-lock-ms', '3000', ...inTaskInputArgs()] });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const CAPABILITIES = { elicitation: {}, sampling: {} };

describe('kill -9 of the replica that mirrors upstream tasks (Redis)', () => {
  it('another replica resumes each mirror on the same upstream session: the tasks end with their real results, nothing re-runs', { timeout: 90_000 }, async () => {
    const victim = await stack.startShim();
    const onVictim = new Sep2663Client(victim.url, { capabilities: CAPABILITIES });
    const work = await onVictim.createTask('native_work', { seconds: 10, label: 'survivor' });
    const confirm = await onVictim.createTask('native_confirm', { filename: 'kept-across-kill.txt' });
    await onVictim.waitForTask(work.taskId, (t) => /^Working survivor: \d+%$/.test(t.statusMessage ?? ''));
    const asking = await onVictim.waitForStatus(confirm.taskId, 'input_required');
    const key = Object.keys(asking.inputRequests)[0] as string;

    const survivor = await stack.startShim();
    const onSurvivor = new Sep2663Client(survivor.url, { capabilities: CAPABILITIES });
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');

    // Answered while no replica mirrors the task: the answer waits in the record for the resumed mirror.
    expect((await onSurvivor.updateTask(confirm.taskId, { [key]: { action: 'accept', content: { confirm: true } } })).status).toBe(200);

    const [worked, confirmed] = await Promise.all(
      [work, confirm].map((t) => onSurvivor.waitForStatus(t.taskId, TERMINAL, { timeoutMs: 45_000, intervalMs: 200 })),
    );
    expect(worked.status).toBe('completed');
    expect(textOf(worked.result)).toBe('Done survivor');
    expect(confirmed.status).toBe('completed');
    expect(textOf(confirmed.result)).toBe('Deleted kept-across-kill.txt');

    // One upstream task each: the survivor followed the running ones instead of calling the tools again.
    const upstream = (await stack.stats()).tasks;
    expect(upstream.filter((t) => t.arguments?.label === 'survivor').map((t) => t.status)).toEqual(['completed']);
    expect(upstream.filter((t) => t.arguments?.filename === 'kept-across-kill.txt').map((t) => t.status)).toEqual(['completed']);
  });

  it('a replica stopped gracefully mid-task leaves the upstream task to another replica, which finishes it', { timeout: 90_000 }, async () => {
    const leaving = await stack.startShim(['--shutdown-grace-ms', '500']);
    const onLeaving = new Sep2663Client(leaving.url, { capabilities: CAPABILITIES });
    const work = await onLeaving.createTask('native_work', { seconds: 8, label: 'rolled' });
    await onLeaving.waitForTask(work.taskId, (t) => /^Working rolled: \d+%$/.test(t.statusMessage ?? ''));

    const staying = await stack.startShim();
    const onStaying = new Sep2663Client(staying.url, { capabilities: CAPABILITIES });
    expect((await leaving.stop('SIGTERM')).code).toBe(0);

    const done = await onStaying.waitForStatus(work.taskId, TERMINAL, { timeoutMs: 45_000, intervalMs: 200 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Done rolled');
    expect((await stack.stats()).tasks.filter((t) => t.arguments?.label === 'rolled').map((t) => t.status)).toEqual(['completed']);
  });
});
