import type { SessionRecord } from '../session/session-store.js';
import type { Reply } from './reply.js';

/**
 * A request as every adapter sees it: what the HTTP edge read and checked (authentication, body,
 * JSON), in no server library's types. Adapters implement `handle(request) → Reply`.
 */
export interface WireRequest {
  /** The HTTP method. */
  method: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The headers as received: a flat list (name, value, …), repeats kept, for a request forwarded as it came. */
  rawHeaders: readonly string[];
  /** The parsed JSON body (absent for GET and DELETE). */
  body: unknown;
  /** The body's bytes, as received. */
  rawBody: Buffer | undefined;
  principal: string;
  /** Aborts when the client goes away; made on first use, so that a request that never waits pays nothing. */
  signal: () => AbortSignal;
  /** Hears the request's legacy session once verified (traffic recording). */
  visit?: { admitted(session: SessionRecord): void };
}

/** One wire's adapter. An adapter that can answer at once returns the Reply itself: a forward then waits for no promise. */
export interface WireAdapter {
  handle(request: WireRequest): Reply | Promise<Reply>;
}
