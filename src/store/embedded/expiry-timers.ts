/** Node fires a timeout longer than this at once, so a longer TTL is reached in several hops. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * One unref'd timer per task, so that expiry never keeps the process alive and removes each
 * task at its deadline rather than at the next sweep.
 */
export class ExpiryTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly onExpire: (id: string) => void) {}

  schedule(id: string, deadline: number): void {
    this.cancel(id);
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        if (Date.now() < deadline) this.schedule(id, deadline);
        else this.onExpire(id);
      },
      Math.min(Math.max(deadline - Date.now(), 0), MAX_TIMEOUT_MS),
    );
    timer.unref();
    this.timers.set(id, timer);
  }

  cancel(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
