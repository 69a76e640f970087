import { randomBytes } from 'node:crypto';
import { LimitExceededError, UnavailableError } from './errors.js';
import type { Clock } from './ports.js';
import type { TaskStore } from '../store/task-store.js';

/** Ids we mint are 22 characters; a longer id can never name a task (docs/decisions/0006-limits.md). */
export const MAX_TASK_ID_LENGTH = 128;
export const TASK_ID_TOO_LONG = `longer than ${MAX_TASK_ID_LENGTH} characters, so it names no task`;

export interface LimitSettings {
  /** Open (non-terminal, unexpired) tasks per principal, fleet-wide; 0: no limit. */
  maxOpenTasks: number;
  /** Open long-lived streams per principal, fleet-wide; 0: no limit. */
  maxOpenStreams: number;
  /** Legacy sessions per principal, fleet-wide; 0 or absent: no limit. */
  maxSessions?: number;
  /** How long a stream counts without renewal: a replica that died stops counting after this. */
  streamLeaseMs: number;
}

/** An open stream's place in its principal's count. */
export interface StreamSlot {
  /** Called on the stream's keep-alive tick. */
  renew(): void;
  /** Called once, when the stream closes. */
  release(): void;
}

const RELEASE_ATTEMPTS = 5;
const RELEASE_RETRY_MS = 250;

const UNCOUNTED: StreamSlot = { renew: () => undefined, release: () => undefined };

/**
 * What one principal may hold open at once, counted in the task store so that every replica
 * sees the same count. A refusal is a LimitExceededError the wires render.
 */
export class PrincipalLimits {
  constructor(
    private readonly store: TaskStore,
    private readonly settings: LimitSettings,
    private readonly clock: Clock,
  ) {}

  /** Open tasks a principal may hold; 0: no limit. */
  get maxOpenTasks(): number {
    return this.settings.maxOpenTasks;
  }

  /** The refusal of a task whose principal holds `open` tasks already. */
  refuseTask(open: number): LimitExceededError {
    return new LimitExceededError('tasks', this.settings.maxOpenTasks, open);
  }

  /** Counts a task about to be created until it ends or expires; throws when the principal is at its limit. */
  async admitTask(principal: string, taskId: string, expiresAt: number): Promise<void> {
    const limit = this.settings.maxOpenTasks;
    if (limit === 0) return;
    const outcome = await this.store.holdOpen('tasks', principal, taskId, expiresAt, limit, this.clock.now());
    if (!outcome.held) throw this.refuseTask(outcome.open);
  }

  /**
   * A task whose creation failed does not count. Creation fails mostly because Redis did not
   * answer in time, and then this release may fail too: it is retried a few times, spaced out,
   * since a release given up holds the principal's slot until the task's TTL.
   */
  async forgetTask(principal: string, taskId: string): Promise<void> {
    if (this.settings.maxOpenTasks === 0) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.releaseOpen('tasks', principal, taskId);
        return;
      } catch (err) {
        if (!(err instanceof UnavailableError) || attempt >= RELEASE_ATTEMPTS - 1) throw err;
        await new Promise((resolve) => setTimeout(resolve, RELEASE_RETRY_MS * 2 ** attempt));
      }
    }
  }

  /** forgetTask in the background: the client hears of the failed creation at once. */
  forgetQuietly(principal: string, taskId: string): void {
    this.forgetTask(principal, taskId).catch(() => undefined);
  }

  /**
   * Counts a legacy session about to open, until `lapsesAt` unless renewed (src/wire/legacy/session-reaper.ts);
   * throws when the principal is at its limit.
   */
  async admitSession(principal: string, sessionId: string, lapsesAt: number): Promise<void> {
    const limit = this.settings.maxSessions ?? 0;
    if (limit === 0) return;
    const outcome = await this.store.holdOpen('sessions', principal, sessionId, lapsesAt, limit, this.clock.now());
    if (!outcome.held) throw new LimitExceededError('sessions', limit, outcome.open);
  }

  /** A session still in use counts until `lapsesAt`; never refuses. */
  async renewSession(principal: string, sessionId: string, lapsesAt: number): Promise<void> {
    if (!this.settings.maxSessions) return;
    await this.store.holdOpen('sessions', principal, sessionId, lapsesAt, -1, this.clock.now());
  }

  /** A session deleted, expired or never opened stops counting. */
  async releaseSession(principal: string, sessionId: string): Promise<void> {
    if (!this.settings.maxSessions) return;
    await this.store.releaseOpen('sessions', principal, sessionId);
  }

  /** Counts a stream about to open; throws when the principal is at its limit. */
  async openStream(principal: string): Promise<StreamSlot> {
    const limit = this.settings.maxOpenStreams;
    if (limit === 0) return UNCOUNTED;
    const { store, clock } = this;
    const leaseMs = this.settings.streamLeaseMs;
    const member = randomBytes(12).toString('base64url');
    const outcome = await store.holdOpen('streams', principal, member, clock.now() + leaseMs, limit, clock.now());
    if (!outcome.held) throw new LimitExceededError('streams', limit, outcome.open);
    let released = false;
    // One store call at a time, so that a renewal still in flight cannot re-add a released stream.
    let last: Promise<unknown> = Promise.resolve();
    const then = (step: () => Promise<unknown>): void => {
      last = last.then(step).catch(() => undefined);
    };
    return {
      renew() {
        if (released) return;
        // Renewal never refuses: an open stream keeps its place even if the limit was lowered.
        then(() => store.holdOpen('streams', principal, member, clock.now() + leaseMs, -1, clock.now()));
      },
      release() {
        if (released) return;
        released = true;
        then(() => store.releaseOpen('streams', principal, member));
      },
    };
  }
}
