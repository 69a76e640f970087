import type { JobProcessor, WorkQueue } from './work-queue.js';

/** The embedded store's queue: jobs run in this process, as soon as they are queued. */
export class InProcessQueue implements WorkQueue {
  private processor: JobProcessor | undefined;
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
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
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise((resolve) => (timer = setTimeout(resolve, graceMs).unref())),
    ]);
    clearTimeout(timer);
  }

  private pump(): void {
    const processor = this.processor;
    if (!processor) return;
    while (this.running.size < this.concurrency && this.waiting.length > 0) {
      const taskId = this.waiting.shift() as string;
      const run: Promise<void> = processor({ taskId, lostRuns: 0 })
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
