import type { SessionStore, StreamEvent, StreamMeta } from '../../session/session-store.js';
import type { SseOut } from '../reply.js';

/**
 * One SSE stream of a legacy session. Every event gets a shim-assigned id and goes into the
 * session's shared log first, so a client may resume it with `Last-Event-ID` on any replica.
 * Writes are serialised: the log order is the wire order. Every write goes through the replica's
 * stream budget (the edge's SseOut) and waits for the client to read the one before: a client
 * that stops reading loses the connection, not an event, since it resumes from the log.
 */
export class SessionStream {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly out: SseOut,
    private readonly sessions: SessionStore,
    readonly sessionId: string,
    readonly streamId: string,
  ) {}

  get closed(): boolean {
    return this.out.closed;
  }

  /** For a new stream (no resumption), registers it and writes a priming event. */
  async open(meta: StreamMeta | undefined, retentionMs: number): Promise<void> {
    if (meta) {
      await this.sessions.openStream(this.sessionId, this.streamId, meta, retentionMs);
      await this.write('');
    }
  }

  /** Logs then writes one JSON-RPC message. */
  send(message: Record<string, unknown>): Promise<void> {
    return this.write(JSON.stringify(message));
  }

  /**
   * Writes events already in the log (a resumption), without logging them again, as fast as the
   * client reads them.
   */
  async replay(events: readonly StreamEvent[]): Promise<void> {
    for (const event of events) {
      this.raw(event.eventId, event.data);
      if (this.out.behind && !(await this.out.drained())) return;
    }
  }

  /** Ends the stream after everything queued before this call is written. */
  async end(): Promise<void> {
    await this.chain;
    this.out.end();
  }

  private write(data: string): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.closed) return;
      const eventId = await this.sessions.appendEvent(this.sessionId, this.streamId, data);
      // One event at a time, as fast as the client reads; a client that stops reading is cut by
      // the keep-alive's stall check, and the logged event reaches it when it resumes.
      if (this.out.behind && !(await this.out.drained())) return;
      this.raw(eventId, data);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private raw(eventId: string, data: string): void {
    if (this.closed) return;
    this.out.write(`id: ${eventId}\ndata: ${data}\n\n`);
  }
}
