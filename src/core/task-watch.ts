import { changeFanOut } from './change-fan-out.js';
import { isTerminal, type TaskRecord } from './task.js';
import type { TaskStore } from '../store/task-store.js';

/**
 * Resolves with the task once `until` holds, or with the last seen state when `timeoutMs`
 * passes or `signal` aborts. Change events wake it at once; a slow re-read covers a missed
 * pub/sub message (a Redis reconnect drops them).
 */
export async function waitForTask(
  store: TaskStore,
  taskId: string,
  until: (task: TaskRecord) => boolean,
  options: { timeoutMs: number; signal?: AbortSignal; recheckMs?: number },
): Promise<TaskRecord | undefined> {
  let last = await store.load(taskId);
  if (!last || until(last) || isTerminal(last.status)) return last;

  return new Promise((resolve) => {
    let settled = false;
    let reading = false;
    let dirty = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      clearTimeout(timeout);
      clearInterval(recheck);
      options.signal?.removeEventListener('abort', finish);
      resolve(last);
    };
    const reread = async (): Promise<void> => {
      if (reading) {
        dirty = true;
        return;
      }
      reading = true;
      try {
        do {
          dirty = false;
          last = await store.load(taskId);
        } while (dirty && !settled);
      } catch {
        // A failed read is retried by the next change or recheck.
      } finally {
        reading = false;
      }
      if (!last || until(last) || isTerminal(last.status)) finish();
    };
    // Through the process's fan-out: a change costs a lookup, not a call per waiting task.
    const unsubscribe = changeFanOut(store).onTask(taskId, () => void reread());
    const timeout = setTimeout(finish, options.timeoutMs);
    const recheck = setInterval(() => void reread(), options.recheckMs ?? 2_000);
    options.signal?.addEventListener('abort', finish, { once: true });
    // A change that landed between the first read and the subscription would otherwise be missed.
    void reread();
  });
}
