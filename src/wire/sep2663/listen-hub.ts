import { changeFanOut, type ChangeFanOut } from '../../core/change-fan-out.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { TaskChange, TaskFeed } from '../../core/task-change.js';
import { taskFrame } from './listen-frame.js';
import { renderDetailedTask } from './render.js';

/** One open listen stream, as the hub sees it. */
export interface ListenWatcher {
  /** Only a record of this principal is ever written to the stream. */
  readonly principal: string;
  /** From `taskFramePrefix(id)`: the stream's own `_meta`. */
  readonly framePrefix: string;
  /** Writes one complete SSE frame. */
  write(frame: string): void;
}

export interface ListenHubOptions {
  /** How often every watched task is read again, whether or not a change event said so. */
  sweepMs?: number;
  /** Reads in flight at once during a sweep. */
  sweepBatch?: number;
}

const DEFAULT_SWEEP_MS = 5_000;
const DEFAULT_SWEEP_BATCH = 50;

/** What a stream last sent for a task: a read that finds nothing new, or an older state, sends nothing. */
interface Sent {
  signature: string;
  lastUpdatedAt: number;
}

function sent(task: TaskRecord): Sent {
  const signature = `${task.lastUpdatedAt}:${task.status}:${task.statusMessage ?? ''}:${Object.keys(task.inputRequests).join(',')}`;
  return { signature, lastUpdatedAt: task.lastUpdatedAt };
}

/**
 * The listen streams of one process share this hub: one read per change of a watched task however
 * many streams watch it, one render and one stringify per change. Change events come through the
 * process's one subscription that the legacy streams share too (`changeFanOut`), per watched task.
 *
 * Redis pub/sub drops what is published while the subscriber reconnects, and the store gives no
 * per-reconnect signal (`subscriptionReady` settles once). So a slow sweep reads every watched
 * task again every `sweepMs`: it bounds how late a missed change arrives, needs nothing but
 * `loadTask`, and covers any other lost message too. Its cost is one read per watched task
 * (not per stream) per sweep, and it only runs while some stream watches something.
 */
export class ListenHub {
  /** Task id → its watchers → what each last received. */
  private readonly watched = new Map<string, Map<ListenWatcher, Sent>>();
  /** Reads in flight per task; `again` asks for one more read after it (changes coalesce). */
  private readonly reading = new Map<string, { again: boolean; done: Promise<void> }>();
  /** Snapshot reads in flight, by principal and task id, shared by streams that open at the same moment. */
  private readonly snapshots = new Map<string, Promise<TaskRecord | undefined>>();
  private readonly sweepMs: number;
  private readonly sweepBatch: number;
  private readonly changes: ChangeFanOut<TaskChange>;
  /** Per watched task, what stops following its change events. */
  private readonly following = new Map<string, () => void>();
  private sweepTimer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly tasks: TaskFeed,
    options: ListenHubOptions = {},
  ) {
    this.sweepMs = options.sweepMs ?? DEFAULT_SWEEP_MS;
    this.sweepBatch = options.sweepBatch ?? DEFAULT_SWEEP_BATCH;
    this.changes = changeFanOut(tasks);
  }

  /**
   * The current record when it is `principal`'s: another principal's task is never read whole,
   * so that it answers in the time an unknown id takes.
   */
  snapshot(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const key = `${principal}\n${taskId}`;
    let pending = this.snapshots.get(key);
    if (!pending) {
      pending = this.tasks.findTask(principal, taskId);
      this.snapshots.set(key, pending);
      const forget = (): void => {
        this.snapshots.delete(key);
      };
      pending.then(forget, forget);
    }
    return pending;
  }

  /**
   * Watches the given snapshots (records of `watcher.principal` it already sent) until each is
   * terminal. Returns the unwatch, which the stream calls when it closes.
   */
  watch(watcher: ListenWatcher, snapshots: readonly TaskRecord[]): () => void {
    const ids: string[] = [];
    for (const task of snapshots) {
      if (isTerminal(task.status)) continue;
      let watchers = this.watched.get(task.taskId);
      if (!watchers) {
        watchers = new Map();
        this.watched.set(task.taskId, watchers);
        this.following.set(task.taskId, this.changes.onTask(task.taskId, (change) => void this.refresh(change.taskId)));
      }
      watchers.set(watcher, sent(task));
      ids.push(task.taskId);
    }
    if (ids.length === 0) return () => undefined;
    this.start();
    // A change between the snapshot read and this registration is caught by one more read.
    for (const taskId of ids) void this.refresh(taskId);
    return () => {
      for (const taskId of ids) {
        const watchers = this.watched.get(taskId);
        if (watchers?.delete(watcher) && watchers.size === 0) this.forget(taskId);
      }
    };
  }

  /** Watched tasks, distinct watchers, and whether the hub follows change events. */
  stats(): { tasks: number; watchers: number; subscribed: boolean } {
    const watchers = new Set<ListenWatcher>();
    for (const map of this.watched.values()) for (const watcher of map.keys()) watchers.add(watcher);
    return { tasks: this.watched.size, watchers: watchers.size, subscribed: this.following.size > 0 };
  }

  private start(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweep(), this.sweepMs);
    this.sweepTimer.unref();
  }

  /** One read at a time per task; changes that arrive meanwhile cost one more read, not one each. */
  private refresh(taskId: string): Promise<void> {
    const inFlight = this.reading.get(taskId);
    if (inFlight) {
      inFlight.again = true;
      return inFlight.done;
    }
    const state = { again: true, done: Promise.resolve() };
    state.done = (async () => {
      try {
        while (state.again && this.watched.has(taskId)) {
          state.again = false;
          let task: TaskRecord | undefined;
          try {
            task = await this.tasks.loadTask(taskId);
          } catch {
            continue; // A failed read is retried by the next change or sweep.
          }
          this.deliver(taskId, task);
        }
      } finally {
        this.reading.delete(taskId);
      }
    })();
    this.reading.set(taskId, state);
    return state.done;
  }

  private deliver(taskId: string, task: TaskRecord | undefined): void {
    const watchers = this.watched.get(taskId);
    if (!watchers) return;
    if (!task) {
      // Expired (or removed): no later change can arrive for it.
      this.forget(taskId);
      return;
    }
    const latest = sent(task);
    let json: string | undefined;
    for (const [watcher, last] of watchers) {
      if (watcher.principal !== task.principal || last.signature === latest.signature || last.lastUpdatedAt > latest.lastUpdatedAt) continue;
      watchers.set(watcher, latest);
      json ??= JSON.stringify(renderDetailedTask(task));
      watcher.write(taskFrame(watcher.framePrefix, json));
    }
    if (isTerminal(task.status)) this.forget(taskId);
  }

  private forget(taskId: string): void {
    this.watched.delete(taskId);
    this.following.get(taskId)?.();
    this.following.delete(taskId);
    if (this.watched.size > 0) return;
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const ids = [...this.watched.keys()];
      for (let i = 0; i < ids.length; i += this.sweepBatch) {
        await Promise.all(ids.slice(i, i + this.sweepBatch).map((taskId) => this.refresh(taskId)));
      }
    } finally {
      this.sweeping = false;
    }
  }
}
