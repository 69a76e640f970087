import { describe, expect, it } from 'vitest';
import { useNativeStack } from '../../support/native-stack.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';

const stack = useNativeStack({ stores: ['embedded'] });

describe('the log of a native task whose upstream is gone', () => {
  it('writes the mirror that gave up with its cause, and the task failed line', { timeout: 60_000 }, async () => {
    const shim = stack.shim('embedded');
    const client = new Sep2663Client(shim.url);
    const created = await client.createTask('native_work', { seconds: 60, label: 'logged' });
    await client.waitForTask(created.taskId, (task) => (task.statusMessage ?? '').startsWith('Working logged'));
    stack.upstream.killGroup();
    await stack.upstream.exited;
    await client.waitForStatus(created.taskId, 'failed', { timeoutMs: 30_000, intervalMs: 200 });

    const lines = (): Array<Record<string, unknown>> =>
      shim
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const gaveUp = await pollUntil(
      async () => lines().find((line) => line.msg === 'upstream unreachable' && String(line.operation).startsWith('mirror of upstream task ')),
      (line) => line !== undefined,
    );
    expect(gaveUp).toMatchObject({ level: 50, cause: expect.stringMatching(/ECONNREFUSED|ECONNRESET|other side closed/) });
    const failed = await pollUntil(async () => lines().find((line) => line.msg === 'task failed' && line.taskId === created.taskId), (line) => line !== undefined);
    expect(failed).toMatchObject({ level: 30, wire: 'sep2663', tool: 'native_work' });
  });
});
