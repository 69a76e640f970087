import type { StreamAdmission } from '../wire/reply.js';
import { StreamBudget, type StreamBudgetSettings } from './stream-budget.js';

/** The configuration's default (`listenKeepAliveMs`). */
const DEFAULT_KEEP_ALIVE_MS = 15_000;

/** 4 MiB per stream, 64 MiB per replica (docs/security.md, "Limits"). */
const DEFAULT_STREAM_BUDGET: StreamBudgetSettings = { maxStreamBytes: 4 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

/**
 * The long-lived responses this replica holds (SEP-2663 listens, legacy GET and tasks/result
 * streams), so that a graceful shutdown can end each one the way its wire asks for, the bytes
 * they may leave unsent (`budget`), which every one of them writes through, and how often an idle
 * one gets a keep-alive comment (src/http/sse.ts).
 */
export class OpenStreams implements StreamAdmission {
  private readonly enders = new Set<() => void>();
  private draining = false;
  readonly budget: StreamBudget;

  constructor(
    budget: StreamBudgetSettings = DEFAULT_STREAM_BUDGET,
    readonly keepAliveMs = DEFAULT_KEEP_ALIVE_MS,
  ) {
    this.budget = new StreamBudget(budget);
  }

  /** Throws the limit error while the replica holds more unsent stream bytes than it may. */
  admit(): void {
    this.budget.admit();
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
