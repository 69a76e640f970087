import type { AggregateStore } from './aggregates.js';
import { Aggregator } from './aggregator.js';
import type { Recorder, RequestEvent, StreamKind, TaskEvent } from './events.js';
import type { ShimMetrics } from './metrics.js';

export interface TrafficRecorderOptions {
  aggregates: AggregateStore;
  metrics: ShimMetrics;
  /** How often the counts go to the shared aggregates; default 1 s. */
  flushMs?: number;
  now?: () => number;
  /** Where a failure of the recorder itself goes; it never reaches a request. */
  log?: (message: string) => void;
}

const CLOSE_FLUSH_TIMEOUT_MS = 2_000;

/**
 * The recorder of one replica. `record` and `task` update this replica's Prometheus series and
 * its in-memory aggregator, synchronously, and never throw; a timer flushes the aggregator to the
 * shared store every second. A flush that fails (store unreachable) puts the batch back, so the
 * counts wait in memory for the next one, and counts the gap, which is written with the first
 * flush that succeeds.
 */
export class TrafficRecorder implements Recorder {
  private readonly aggregator: Aggregator;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private reported = false;

  constructor(private readonly options: TrafficRecorderOptions) {
    this.aggregator = new Aggregator(options.now);
  }

  get pending(): number {
    return this.aggregator.pending;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 1_000);
    this.timer.unref();
  }

  record(event: RequestEvent): void {
    try {
      this.options.metrics.request(event);
      this.aggregator.request(event);
    } catch (err) {
      this.fault(err);
    }
  }

  task(event: TaskEvent): void {
    try {
      this.options.metrics.task(event);
      this.aggregator.task(event);
    } catch (err) {
      this.fault(err);
    }
  }

  streamOpened(kind: StreamKind): () => void {
    try {
      return this.options.metrics.streamOpened(kind);
    } catch (err) {
      this.fault(err);
      return () => undefined;
    }
  }

  sessionSeen(sessionId: string): void {
    try {
      this.options.metrics.sessionSeen(sessionId);
    } catch (err) {
      this.fault(err);
    }
  }

  /** Writes what was counted so far; one flush at a time. Never rejects. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      (async () => {
        await this.flushing;
        await this.flush();
      })(),
      new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    await this.options.aggregates.close().catch(() => undefined);
  }

  private async flushOnce(): Promise<void> {
    const { aggregates, metrics } = this.options;
    // Before the store was ever reachable (start-up) there is nothing to call a gap; the counts wait, bounded.
    if (!aggregates.ready()) {
      this.aggregator.trim();
      return;
    }
    const batch = this.aggregator.take();
    if (!batch) return;
    try {
      await aggregates.write(batch);
    } catch {
      this.aggregator.restore(batch);
      this.aggregator.gap();
      metrics.gap();
    }
  }

  private fault(err: unknown): void {
    if (this.reported) return;
    this.reported = true;
    this.options.log?.(`traffic recording failed (reported once): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}
