/** What a change event says about the task that changed: enough to route it without a read. */
export interface ChangeNotice {
  taskId: string;
  /** The legacy session whose streams deliver the task's pushes. */
  sessionId?: string;
}

/** Where change events come from: the task store (or whatever stands in front of it). */
export interface ChangeSource<C extends ChangeNotice = ChangeNotice> {
  subscribe(listener: (change: C) => void): () => void;
}

/** Called with the change; a listener that needs more than it says reads the task itself. */
type ChangeListener<C> = (change: C) => void;

/**
 * The change events of one process, routed to the streams that want them: one subscription to the
 * source while anything is watched, and a map from task id and from legacy session id to the
 * listeners. A change costs two map lookups however many streams are open, instead of one call per
 * open stream. docs/decisions/0027-lua-and-fan-out.md.
 */
export class ChangeFanOut<C extends ChangeNotice = ChangeNotice> {
  private readonly byTask = new Map<string, Set<ChangeListener<C>>>();
  private readonly bySession = new Map<string, Set<ChangeListener<C>>>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly source: ChangeSource<C>) {}

  /** Calls `listener` on every change of `taskId` until the returned function is called. */
  onTask(taskId: string, listener: ChangeListener<C>): () => void {
    return this.add(this.byTask, taskId, listener);
  }

  /** Calls `listener` on every change of a task whose pushes go to `sessionId`. */
  onSession(sessionId: string, listener: ChangeListener<C>): () => void {
    return this.add(this.bySession, sessionId, listener);
  }

  /** Whether it holds the source subscription, and how many task and session ids have listeners. */
  stats(): { subscribed: boolean; tasks: number; sessions: number } {
    return { subscribed: this.unsubscribe !== undefined, tasks: this.byTask.size, sessions: this.bySession.size };
  }

  private add(map: Map<string, Set<ChangeListener<C>>>, id: string, listener: ChangeListener<C>): () => void {
    // Wrapped so that one function added twice is two registrations, each removable alone.
    const entry: ChangeListener<C> = (change) => listener(change);
    let listeners = map.get(id);
    if (!listeners) {
      listeners = new Set();
      map.set(id, listeners);
    }
    listeners.add(entry);
    this.unsubscribe ??= this.source.subscribe((change) => this.deliver(change));
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      const current = map.get(id);
      if (current?.delete(entry) && current.size === 0) map.delete(id);
      if (this.byTask.size === 0 && this.bySession.size === 0) {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
      }
    };
  }

  private deliver(change: C): void {
    const forTask = this.byTask.get(change.taskId);
    const forSession = change.sessionId === undefined ? undefined : this.bySession.get(change.sessionId);
    // Snapshots: a listener added while delivering does not see a change that predates it.
    for (const listener of [...(forTask ?? []), ...(forSession ?? [])]) {
      try {
        listener(change);
      } catch (error) {
        // One failing stream must not starve the others; the error still surfaces as uncaught.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

// Keyed by source, whose change type fixes the fan-out's: the cast below cannot mix them.
const fanOuts = new WeakMap<object, unknown>();

/**
 * The one fan-out of `source` in this process: every stream of every wire, every wait and every
 * running job that follows changes of that source shares it, without the composition root
 * handing an instance to each of them.
 */
export function changeFanOut<C extends ChangeNotice>(source: ChangeSource<C>): ChangeFanOut<C> {
  let fanOut = fanOuts.get(source) as ChangeFanOut<C> | undefined;
  if (!fanOut) {
    fanOut = new ChangeFanOut(source);
    fanOuts.set(source, fanOut);
  }
  return fanOut;
}
