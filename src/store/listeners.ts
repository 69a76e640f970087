import type { Unsubscribe } from '../core/task-change.js';

/** The subscribers of one store. */
export class ListenerSet<T> {
  private readonly listeners = new Set<(value: T) => void>();

  add(listener: (value: T) => void): Unsubscribe {
    // Wrapped so that subscribing one function twice gives two subscriptions, each removable alone.
    const entry = (value: T): void => listener(value);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  emit(value: T): void {
    // A snapshot, so a listener added while delivering does not see a change that predates it.
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        // One failing listener must not starve the others; the error still surfaces as uncaught.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
