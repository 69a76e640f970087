import { afterEach, describe, expect, it } from 'vitest';
import { waitForTask } from '../../src/core/task-watch.js';
import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { countSubscriptions } from '../support/counted-subscriptions.js';
import { newTask } from '../support/new-task.js';

describe('waitForTask', () => {
  let inner: EmbeddedTaskStore | undefined;
  afterEach(async () => {
    await inner?.close();
  });

  it('wakes every waiter on its own task, and all waiters of the process hold one store subscription', async () => {
    inner = new EmbeddedTaskStore();
    const real = inner;
    const { source: store, live: subscriptions } = countSubscriptions(real);
    const tasks = await Promise.all(Array.from({ length: 20 }, () => real.create(newTask())));
    const waits = tasks.map((task) => waitForTask(store, task.taskId, (t) => t.status === 'completed', { timeoutMs: 10_000, recheckMs: 60_000 }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(subscriptions()).toBe(1);

    const started = Date.now();
    for (const task of tasks) await real.finish(task.taskId, { status: 'completed', result: { content: [] } }, Date.now());
    const ended = await Promise.all(waits);
    expect(ended.map((task) => task?.status)).toEqual(tasks.map(() => 'completed'));
    // Woken by the change events, not by the (one-minute) re-read or the timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(subscriptions()).toBe(0);
  });
});
