import { settledWithin } from './settled-within.js';
import type { JobPlace, JobProcessor, WorkQueue } from './work-queue.js';

/** How long a drain waits for released jobs' processors to let go (a TaskRunner does at once). */
const RELEASE_WAIT_MS = 1_000;

/**
 * The embedded store's queue: jobs run in this process, as soon as they are queued, up to
 * `concurrency` at once with the jobs run from their task's creation (`reserve`).
 */
export class InProcessQueue implements WorkQueue {
  private processor: JobProcessor | undefined;
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
  /** Places reserved and not yet running or given back. */
  private reserved = 0;
  /** Per running job, what tells its processor to let go. */
  private readonly releases = new Set<AbortController>();
  private closed = false;

  constructor(private readonly concurrency: number) {}

  async enqueue(taskId: string): Promise<void> {
    if (this.closed) throw new Error('this replica is shutting down');
    this.waiting.push(taskId);
    this.pump();
  }

  start(processor: JobProcessor): void {
    this.processor = processor;
    this.pump();
  }

  reserve(force: boolean): JobPlace | undefined {
    if (this.closed || (!force && this.busy() >= this.concurrency)) return undefined;
    this.reserved++;
    let given = false;
    const take = (): boolean => {
      if (given) return false;
      given = true;
      this.reserved--;
      return true;
    };
    return {
      // Nothing outlives this process: there is no lease to write.
      lease: async () => undefined,
      run: (_taskId, body) => {
        if (take()) this.track(body);
      },
      giveBack: () => {
        if (take()) this.pump();
      },
    };
  }

  async depth(): Promise<number> {
    return this.waiting.length + this.running.size;
  }

  close(graceMs = 10_000): Promise<void> {
    return this.drain(graceMs);
  }

  /**
   * Nothing queued here outlives this process (nor does the embedded store), so draining also
   * refuses new jobs and drops those that have not started.
   */
  async drain(graceMs: number): Promise<void> {
    this.closed = true;
    this.processor = undefined;
    this.waiting.length = 0;
    await settledWithin(this.running, graceMs);
    // What still runs is let go: its processor returns, and its task ends with this process.
    for (const release of this.releases) release.abort();
    await settledWithin(this.running, RELEASE_WAIT_MS);
  }

  private busy(): number {
    return this.running.size + this.reserved;
  }

  private pump(): void {
    const processor = this.processor;
    if (!processor) return;
    while (this.busy() < this.concurrency && this.waiting.length > 0) {
      const taskId = this.waiting.shift() as string;
      this.track((released) => processor({ taskId, lostRuns: 0 }, released));
    }
  }

  private track(body: (released: AbortSignal) => Promise<void>): void {
    const release = new AbortController();
    this.releases.add(release);
    const run: Promise<void> = body(release.signal)
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(run);
        this.releases.delete(release);
        this.pump();
      });
    this.running.add(run);
  }
}
