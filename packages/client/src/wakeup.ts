/**
 * A timer that something else can cut short: the driver sleeps until its next poll, and a
 * pushed snapshot, a ready answer, an abort or a listen change wakes it early.
 */
export class Wakeup {
  private pending = false;
  private resolveSleep: (() => void) | undefined;

  /** Wakes the current sleep, or makes the next one return at once. */
  readonly wake = (): void => {
    this.pending = true;
    this.resolveSleep?.();
  };

  /** Resolves after `ms`, or earlier on `wake()`. */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.resolveSleep = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.resolveSleep = done;
    });
  }
}
