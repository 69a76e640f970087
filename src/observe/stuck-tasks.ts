import { isTerminal, type Wire } from '../core/task.js';
import type { TaskStore } from '../store/task-store.js';
import type { TaskEvent } from './events.js';

/** A task still not terminal this long before its TTL ends counts as stuck. */
export const STUCK_MARGIN_MS = 10_000;
/** How often due tasks are read; well inside the margin, so that each is read before it expires. */
const CHECK_EVERY_MS = 2_000;
/** Tasks whose whole TTL is shorter than this are not watched: the margin would be most of their life. */
const MIN_WATCHED_TTL_MS = 2 * STUCK_MARGIN_MS;
/** Open tasks watched at once; beyond, new ones go unwatched (a bound on memory, not a figure). */
const MAX_WATCHED = 100_000;
/** Reads in flight at once during a check. */
const READS_AT_ONCE = 16;

interface Watched {
  wire: Wire;
  due: number;
  expiresAt: number;
}

/**
 * Counts the tasks created on this replica that are still not terminal shortly before their TTL
 * ends: the deadline their clients poll until, after which the task is gone unanswered. Each task
 * is watched by the replica that created it only, so the counts add up over replicas. A task
 * stops being watched when the store says it ended (its change, heard from every replica); one
 * still watched when due is read once: not terminal then, it is stuck.
 */
export class StuckTasks {
  private readonly watched = new Map<string, Watched>();
  private readonly stuck = new Map<Wire, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private checking = false;

  constructor(
    private readonly store: TaskStore,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = store.subscribe((change) => {
      if (isTerminal(change.status)) this.watched.delete(change.taskId);
    });
    this.timer = setInterval(() => void this.check(), CHECK_EVERY_MS).unref();
  }

  /** This replica's task events: a creation starts a watch; an end applied here stops it at once. */
  task(event: TaskEvent): void {
    if (event.taskId === undefined) return;
    if (event.kind !== 'created') {
      this.watched.delete(event.taskId);
      return;
    }
    if (event.expiresAt - event.createdAt < MIN_WATCHED_TTL_MS || this.watched.size >= MAX_WATCHED) return;
    this.watched.set(event.taskId, { wire: event.wire, due: event.expiresAt - STUCK_MARGIN_MS, expiresAt: event.expiresAt });
  }

  /** Stuck tasks so far, by the wire that created them. */
  counts(): ReadonlyMap<Wire, number> {
    return this.stuck;
  }

  close(): void {
    clearInterval(this.timer);
    this.unsubscribe();
  }

  /** Reads every due task; one that cannot be read (store unreachable) is tried again until it expires. */
  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = this.now();
      const due: Array<[string, Watched]> = [];
      for (const [taskId, task] of this.watched) if (task.due <= now) due.push([taskId, task]);
      for (let i = 0; i < due.length; i += READS_AT_ONCE) {
        await Promise.all(due.slice(i, i + READS_AT_ONCE).map(([taskId, task]) => this.read(taskId, task)));
      }
    } finally {
      this.checking = false;
    }
  }

  private async read(taskId: string, task: Watched): Promise<void> {
    try {
      const record = await this.store.load(taskId);
      // Gone already (expired, or its end was missed while the store was away): nothing to tell.
      if (this.watched.delete(taskId) && record && !isTerminal(record.status)) this.stuck.set(task.wire, (this.stuck.get(task.wire) ?? 0) + 1);
    } catch {
      if (this.now() >= task.expiresAt) this.watched.delete(taskId);
    }
  }
}
