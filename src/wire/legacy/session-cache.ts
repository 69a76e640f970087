import type { SessionRecord, SessionStore } from '../../session/session-store.js';

const MAX_ENTRIES = 10_000;
const MAX_FRESH_MS = 1_000;

/**
 * Sessions this replica read in the last moment, for requests it only forwards: a passthrough
 * needs the session's principal and upstream session id, which never change, and paid a Redis
 * round trip (and an idle-TTL refresh) each time. The refresh still happens at least once per
 * freshness window of an active session, and a tenth of the idle TTL keeps even a short TTL
 * from lapsing meanwhile. Task methods never use it: they read the session's dialect mark, which
 * another replica may have just set.
 */
export class SessionCache {
  private readonly entries = new Map<string, { record: SessionRecord; until: number }>();
  private readonly freshMs: number;

  constructor(
    private readonly sessions: SessionStore,
    private readonly idleTtlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.freshMs = Math.min(MAX_FRESH_MS, Math.floor(idleTtlMs / 10));
  }

  /**
   * The session, from this replica's recent read when there is one: then at once, not a promise,
   * so that a forwarded message waits for nothing.
   */
  get(sessionId: string): SessionRecord | Promise<SessionRecord | undefined> {
    const entry = this.entries.get(sessionId);
    if (entry && entry.until > this.now()) return entry.record;
    return this.read(sessionId);
  }

  /** A fresh read from the store (refreshing the idle TTL), remembered for forwarding. */
  async read(sessionId: string): Promise<SessionRecord | undefined> {
    const record = await this.sessions.get(sessionId, this.idleTtlMs);
    this.entries.delete(sessionId);
    if (!record) return undefined;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(sessionId, { record, until: this.now() + this.freshMs });
    return record;
  }

  forget(sessionId: string): void {
    this.entries.delete(sessionId);
  }
}
