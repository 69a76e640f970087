import { RedisTaskStore } from '../store/redis/redis-store.js';
import type { OpenKind, TaskStore } from '../store/task-store.js';

export const OPEN_KINDS: readonly OpenKind[] = ['tasks', 'streams', 'sessions'];

/** The window `highest` reports over, in slots of SLOT_MS. */
const WINDOW_MS = 60_000;
const SLOT_MS = 10_000;
const SLOTS = WINDOW_MS / SLOT_MS;

/**
 * The most one principal held of each kind, as the store's answers to this replica's admissions
 * and renewals report it. Those counts are the fleet's (the principal's set in the store), so the
 * highest over every replica is the fleet's fullest principal. Kept per 10-second slot for the
 * last minute: a scrape reads what the minute before it saw, whatever the scrape interval.
 */
export class LimitUsage {
  private readonly slots = new Map<OpenKind, Array<{ start: number; most: number }>>(
    OPEN_KINDS.map((kind) => [kind, Array.from({ length: SLOTS }, () => ({ start: 0, most: 0 }))]),
  );

  constructor(private readonly now: () => number = Date.now) {}

  held(kind: OpenKind, open: number): void {
    const start = Math.floor(this.now() / SLOT_MS) * SLOT_MS;
    const slot = this.slots.get(kind)![(start / SLOT_MS) % SLOTS]!;
    if (slot.start !== start) {
      slot.start = start;
      slot.most = 0;
    }
    if (open > slot.most) slot.most = open;
  }

  /** The most one principal held of `kind` in the last minute; 0 when nothing was counted. */
  highest(kind: OpenKind): number {
    const horizon = this.now() - WINDOW_MS;
    let most = 0;
    for (const slot of this.slots.get(kind)!) if (slot.start > horizon && slot.most > most) most = slot.most;
    return most;
  }
}

/**
 * Hears the counts the store answers: `holdOpen` (admissions and renewals of tasks, streams and
 * sessions) and, on one Redis, `createQueued` and `createHeld` (a task counted in the script that creates it).
 * Wraps those methods of this very instance, as observeTaskLifecycle does; every other method
 * stays untouched.
 */
export function observeLimitUsage(store: TaskStore, usage: LimitUsage): void {
  const { holdOpen } = store;
  store.holdOpen = async (kind, principal, member, lapsesAt, limit, now) => {
    const outcome = await holdOpen.call(store, kind, principal, member, lapsesAt, limit, now);
    usage.held(kind, outcome.open);
    return outcome;
  };
  if (store instanceof RedisTaskStore) {
    const { createQueued, createHeld } = store;
    store.createQueued = async (task, queue, maxOpenTasks) => {
      const outcome = await createQueued.call(store, task, queue, maxOpenTasks);
      if (outcome.open !== undefined) usage.held('tasks', outcome.open);
      return outcome;
    };
    store.createHeld = async (task, lease, maxOpenTasks) => {
      const outcome = await createHeld.call(store, task, lease, maxOpenTasks);
      if (outcome.open !== undefined) usage.held('tasks', outcome.open);
      return outcome;
    };
  }
}
