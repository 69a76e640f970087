import { isTerminal, type TaskRecord, type Wire } from '../core/task.js';
import { RedisTaskStore } from '../store/redis/redis-store.js';
import type { TaskStore } from '../store/task-store.js';
import type { Recorder, TaskEventKind } from './events.js';

interface Known {
  taskId: string;
  wire: Wire;
  tool: string;
  createdAt: number;
  expiresAt: number;
}

const MAX_KNOWN = 10_000;

/**
 * Records task lifecycles at the store, where each transition happens exactly once in the fleet
 * (one atomic compare-and-set): the replica that applies it records it. Wraps `create` (and a
 * Redis store's `createQueued` and `createHeld`), `load`, `finish` and `cancel` of this very instance, so that
 * every holder of the store (the service, the runner, the adapters) goes through them and every
 * other method stays untouched.
 *
 * `finish` carries only the task id; the wire and creation time come from the record the
 * runner loaded just before (remembered here), else from one read after the fact, off the path.
 */
export function observeTaskLifecycle(store: TaskStore, recorder: Recorder): TaskStore {
  const known = new Map<string, Known>();
  const describe = (task: TaskRecord): Known => ({ taskId: task.taskId, wire: task.origin, tool: task.tool, createdAt: task.createdAt, expiresAt: task.createdAt + task.ttlMs });
  const remember = (task: TaskRecord): Known => {
    const entry = describe(task);
    if (known.size >= MAX_KNOWN) known.delete(known.keys().next().value as string);
    known.set(task.taskId, entry);
    return entry;
  };
  const emit = (kind: TaskEventKind, task: Known, at: number): void => {
    recorder.task({ kind, taskId: task.taskId, wire: task.wire, tool: task.tool, createdAt: task.createdAt, expiresAt: task.expiresAt, at });
  };

  const { create, load, finish, cancel } = store;
  store.create = async (task) => {
    const record = await create.call(store, task);
    emit('created', remember(record), record.createdAt);
    return record;
  };
  if (store instanceof RedisTaskStore) {
    const { createQueued, createHeld } = store;
    // Not remembered: a queued task is finished by a TaskRunner, which loads it first.
    store.createQueued = (task, queue, maxOpenTasks) =>
      createQueued.call(store, task, queue, maxOpenTasks).then((outcome) => {
        if (outcome.created) emit('created', describe(outcome.task), outcome.task.createdAt);
        return outcome;
      });
    // Remembered: this replica runs the job from the record it just wrote, without a load.
    store.createHeld = (task, lease, maxOpenTasks) =>
      createHeld.call(store, task, lease, maxOpenTasks).then((outcome) => {
        if (outcome.created) emit('created', remember(outcome.task), outcome.task.createdAt);
        return outcome;
      });
  }
  store.load = async (taskId) => {
    const record = await load.call(store, taskId);
    if (record && !isTerminal(record.status)) remember(record);
    return record;
  };
  store.finish = async (taskId, outcome, now) => {
    const finished = await finish.call(store, taskId, outcome, now);
    if (finished) {
      const entry = known.get(taskId);
      known.delete(taskId);
      if (entry) emit(outcome.status, entry, now);
      else {
        void load
          .call(store, taskId)
          .then((task) => task && emit(outcome.status, describe(task), now))
          .catch(() => undefined);
      }
    }
    return finished;
  };
  store.cancel = async (taskId, principal, statusMessage, now, awaitingUpstream) => {
    const outcome = await cancel.call(store, taskId, principal, statusMessage, now, awaitingUpstream);
    // A cancel that awaits its upstream ends through `finish`, which records it then.
    if (outcome?.changed && isTerminal(outcome.task.status)) {
      known.delete(taskId);
      emit('cancelled', describe(outcome.task), now);
    }
    return outcome;
  };
  return store;
}
