import type { TaskService } from '../../core/task-service.js';
import type { DueSession, SessionStore } from '../../session/session-store.js';
import type { UpstreamRpc } from '../../upstream/client/rpc-client.js';

export interface SessionReaperOptions {
  sessions: SessionStore;
  /** Where a session's place in its principal's count is renewed and released. */
  service: Pick<TaskService, 'renewSession' | 'releaseSession'>;
  /** Closes the upstream sessions of lapsed ones. */
  upstream: Pick<UpstreamRpc, 'deleteSession'>;
  /** How long a session lives without a request. */
  idleTtlMs: number;
}

/** Sessions looked at per store call: a backlog is worked off over several sweeps, not in one burst. */
const BATCH = 100;

/** A session stops counting this long after its deadline unless a sweep finds it in use. */
export function sessionHoldUntil(dueAt: number, idleTtlMs: number): number {
  return dueAt + idleTtlMs;
}

/**
 * Cleans up after legacy sessions that lapsed without a DELETE (idle expiry, or the store evicted
 * them): closes their upstream sessions and frees their place in the principal's session count.
 * Every replica sweeps; the store hands each lapsed session to exactly one of them. A session
 * found in use again has its count renewed until its new deadline.
 */
export class SessionReaper {
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(private readonly options: SessionReaperOptions) {}

  /** About four sweeps per idle TTL, between a quarter second and a minute apart. */
  get intervalMs(): number {
    return Math.min(60_000, Math.max(250, Math.floor(this.options.idleTtlMs / 4)));
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass; a store that does not answer is tried again at the next. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (;;) {
        const { lapsed, extended } = await this.options.sessions.sweepDue(BATCH);
        await Promise.all([
          ...lapsed.map((session) => this.cleanUp(session)),
          ...extended.map((session) =>
            this.options.service.renewSession(session.principal, session.sessionId, sessionHoldUntil(session.dueAt, this.options.idleTtlMs)).catch(() => undefined),
          ),
        ]);
        if (lapsed.length + extended.length < BATCH) return;
      }
    } catch {
      // The store is unreachable: the next sweep finds the same sessions.
    } finally {
      this.sweeping = false;
    }
  }

  private async cleanUp(session: DueSession): Promise<void> {
    await Promise.allSettled([
      this.options.service.releaseSession(session.principal, session.sessionId),
      session.upstreamSessionId ? this.options.upstream.deleteSession(session.upstreamSessionId) : undefined,
    ]);
  }
}
