import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFanOut, changeFanOut } from '../../src/core/change-fan-out.js';
import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { countSubscriptions } from '../support/counted-subscriptions.js';
import { pollUntil } from '../support/sep2663-client.js';
import { newTask } from '../support/new-task.js';

describe('ChangeFanOut', () => {
  const stores: EmbeddedTaskStore[] = [];
  const store = (): EmbeddedTaskStore => {
    const created = new EmbeddedTaskStore();
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('routes a change to the listeners of its task and of its session only', async () => {
    const tasks = store();
    const fanOut = new ChangeFanOut(tasks);
    const heard: string[] = [];
    const mine = await tasks.create(newTask());
    const other = await tasks.create(newTask());
    fanOut.onTask(mine.taskId, ({ taskId }) => heard.push(`task:${taskId}`));
    fanOut.onSession('s1', ({ taskId }) => heard.push(`s1:${taskId}`));
    fanOut.onSession('s2', ({ taskId }) => heard.push(`s2:${taskId}`));
    await tasks.setStatusMessage(other.taskId, 'no one listens', Date.now());
    await tasks.touchSession(other.taskId, 'alice', 's1', Date.now());
    await tasks.setStatusMessage(mine.taskId, 'mine', Date.now());
    await pollUntil(async () => heard.length, (n) => n >= 2);
    expect(heard).toEqual([`s1:${other.taskId}`, `task:${mine.taskId}`]);
  });

  it('subscribes once while anything listens, and lets go with the last listener', async () => {
    const { source, live } = countSubscriptions(store());
    const fanOut = new ChangeFanOut(source);
    const stops = [fanOut.onTask('a', () => undefined), fanOut.onTask('a', () => undefined), fanOut.onSession('s', () => undefined)];
    expect(live()).toBe(1);
    expect(fanOut.stats()).toEqual({ subscribed: true, tasks: 1, sessions: 1 });
    stops[0]!();
    stops[0]!();
    stops[2]!();
    expect(live()).toBe(1);
    stops[1]!();
    expect(live()).toBe(0);
    expect(fanOut.stats()).toEqual({ subscribed: false, tasks: 0, sessions: 0 });
  });

  it('keeps delivering to the other listeners when one throws', async () => {
    const tasks = store();
    const fanOut = new ChangeFanOut(tasks);
    const task = await tasks.create(newTask());
    let heard = 0;
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      fanOut.onTask(task.taskId, () => {
        throw new Error('a broken stream');
      });
      fanOut.onTask(task.taskId, () => void heard++);
      await tasks.setStatusMessage(task.taskId, 'changed', Date.now());
      await pollUntil(async () => heard + uncaught.length, (n) => n >= 2);
      expect(heard).toBe(1);
      expect(uncaught).toEqual([new Error('a broken stream')]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('is one per source in a process', () => {
    const a = store();
    expect(changeFanOut(a)).toBe(changeFanOut(a));
    expect(changeFanOut(a)).not.toBe(changeFanOut(store()));
  });
});
