import { settledWithin } from './settled-within.js';
import type { JobProcessor, WorkQueue } from './work-queue.js';

/** How long a drain waits for released jobs' processors to let go (a TaskRunner does at once). */
const RELEASE_WAIT_MS = 1_000;

/** The embedded store's queue: jobs run in this process, as soon as they are queued. */
export class InProcessQueue implements WorkQueue {
  private processor: JobProcessor | undefined;
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
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

  private pump(): void {
    const processor = this.processor;
    if (!processor) return;
    while (this.running.size < this.concurrency && this.waiting.length > 0) {
      const taskId = this.waiting.shift() as string;
      const release = new AbortController();
      this.releases.add(release);
      const run: Promise<void> = processor({ taskId, lostRuns: 0 }, release.signal)
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(run);
          this.releases.delete(release);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
