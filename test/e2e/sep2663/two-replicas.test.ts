import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });

describe('two shim processes on one Redis', () => {
  let second: ShimProcess;
  beforeAll(async () => {
    second = await stack.startShim();
  });
  const one = (): Sep2663Client => new Sep2663Client(stack.shim().url);
  const two = (): Sep2663Client => new Sep2663Client(second.url);

  it('a task created through one replica is read through the other right away', async () => {
    const created = await one().createTask('slow_compute', { seconds: 1.5 });
    const read = await two().result('tasks/get', { taskId: created.taskId });
    expect(read.taskId).toBe(created.taskId);
    expect(read.createdAt).toBe(created.createdAt);
    const done = await two().waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Computed result after 1.5s');
  });

  it('confirm_delete created through one replica is answered through the other and completes', async () => {
    const created = await one().createTask('confirm_delete', { filename: 'shared.txt' });
    const task = await two().waitForStatus(created.taskId, 'input_required');
    const key = Object.keys(task.inputRequests)[0] as string;
    const ack = await two().updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } });
    expect(ack.status).toBe(200);
    const done = await one().waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Deleted shared.txt');
  });

  it('slow_compute created through one replica is cancelled through the other', async () => {
    const created = await one().createTask('slow_compute', { seconds: 30 });
    expect((await two().cancelTask(created.taskId)).status).toBe(200);
    expect((await one().waitForStatus(created.taskId, ['cancelled', 'completed', 'failed'])).status).toBe('cancelled');
  });

  it('a listen on one replica sees a change made through the other', async () => {
    const created = await one().createTask('slow_compute', { seconds: 30 });
    const stream = await two().listen({ notifications: { taskIds: [created.taskId] } });
    try {
      expect((await stream.nextMessage()).params.notifications.taskIds).toEqual([created.taskId]);
      await one().cancelTask(created.taskId);
      const note = await stream.nextMessage((m) => m.method === 'notifications/tasks' && m.params.status === 'cancelled');
      expect(note.params.taskId).toBe(created.taskId);
    } finally {
      stream.close();
    }
  });

  it('a task outlives the replica that created it (killed)', async () => {
    const third = await stack.startShim();
    const created = await new Sep2663Client(third.url).createTask('confirm_delete', { filename: 'orphan.txt' });
    const task = await one().waitForStatus(created.taskId, 'input_required');
    await third.stop('SIGKILL');
    const read = await two().result('tasks/get', { taskId: created.taskId });
    expect(read.taskId).toBe(task.taskId);
    await two().cancelTask(created.taskId);
  });
});
