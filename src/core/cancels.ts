import { UPSTREAM_CANCEL_GRACE_MS, UPSTREAM_CANCEL_MESSAGES } from '../mapping/upstream-statuses.js';
import type { Clock } from './ports.js';
import { isTerminal, type TaskRecord } from './task.js';
import { waitForTask } from './task-watch.js';
import type { CancelOutcome, TaskStore } from '../store/task-store.js';

/**
 * Past the grace, how long the mirror still has to write what the upstream answered (a result it
 * was fetching when the upstream refused the cancel) before the record ends without it.
 */
const SETTLE_MS = 1_000;

/**
 * Records cancel requests and bounds the ones that wait for an upstream: a task an upstream task
 * backs stays live until its mirror ends it with the upstream's answer, on whatever replica the
 * mirror runs. The replica that took the request ends the record itself if nothing did within the
 * grace (no mirror runs: its replica died, or it is an `api` replica's task). One wait per task
 * per replica, however many cancels of it arrive; each lasts at most the grace and the margin,
 * and only a live task the caller owns (counted in its open tasks) gets one.
 */
export class Cancels {
  private readonly waits = new Map<string, Promise<TaskRecord | undefined>>();

  constructor(
    private readonly store: TaskStore,
    private readonly clock: Clock,
    private readonly graceMs = UPSTREAM_CANCEL_GRACE_MS,
  ) {}

  /** Undefined for an unknown, expired or foreign task, as `TaskStore.cancel`. */
  async cancel(principal: string, taskId: string, statusMessage: string): Promise<CancelOutcome | undefined> {
    const outcome = await this.store.cancel(taskId, principal, statusMessage, this.clock.now(), UPSTREAM_CANCEL_MESSAGES.awaiting);
    // A failed wait leaves the bound to the mirror (or its resumption) and the task's TTL.
    if (outcome && !isTerminal(outcome.task.status)) this.settled(taskId).catch(() => undefined);
    return outcome;
  }

  /**
   * The task once it ended after a cancel: at once for most; within the grace (and the margin)
   * for one an upstream task backs. Undefined once the task is gone.
   */
  settled(taskId: string): Promise<TaskRecord | undefined> {
    let wait = this.waits.get(taskId);
    if (!wait) {
      wait = this.watch(taskId).finally(() => this.waits.delete(taskId));
      this.waits.set(taskId, wait);
    }
    return wait;
  }

  private async watch(taskId: string): Promise<TaskRecord | undefined> {
    const seen = await waitForTask(this.store, taskId, () => false, { timeoutMs: this.graceMs + SETTLE_MS });
    if (!seen || isTerminal(seen.status)) return seen;
    await this.store.finish(taskId, { status: 'cancelled', statusMessage: UPSTREAM_CANCEL_MESSAGES.unconfirmed(this.graceMs) }, this.clock.now());
    return this.store.load(taskId);
  }
}
