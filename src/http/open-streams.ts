import { StreamBudget, type StreamBudgetSettings } from './stream-budget.js';

/** 4 MiB per stream, 64 MiB per replica (docs/security.md, "Limits"). */
const DEFAULT_STREAM_BUDGET: StreamBudgetSettings = { maxStreamBytes: 4 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

/**
 * The long-lived responses this replica holds (SEP-2663 listens, legacy GET and tasks/result
 * streams), so that a graceful shutdown can end each one the way its wire asks for, and the
 * bytes they may leave unsent (`budget`), which every one of them writes through.
 */
export class OpenStreams {
  private readonly enders = new Set<() => void>();
  private draining = false;
  readonly budget: StreamBudget;

  constructor(budget: StreamBudgetSettings = DEFAULT_STREAM_BUDGET) {
    this.budget = new StreamBudget(budget);
  }

  /**
   * Registers a stream's graceful end; returns its unregistration. A stream that opens while
   * the replica drains is ended at once, so that its client reconnects to another replica.
   */
  add(end: () => void): () => void {
    if (this.draining) {
      queueMicrotask(end);
      return () => undefined;
    }
    this.enders.add(end);
    return () => this.enders.delete(end);
  }

  get size(): number {
    return this.enders.size;
  }

  /** Ends every open stream, and every stream that opens from now on. */
  endAll(): void {
    this.draining = true;
    const enders = [...this.enders];
    this.enders.clear();
    for (const end of enders) end();
  }
}
