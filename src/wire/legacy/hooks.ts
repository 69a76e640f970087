import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionRecord } from '../../session/session-store.js';
import type { Reply } from '../reply.js';

/**
 * Where the traffic recorder looks at old-API traffic without the adapter knowing why. It only
 * listens: the cutover stage in front of the adapter decides refusals. Optional, and each call is
 * synchronous and cheap.
 */
export interface LegacyHooks {
  /** A request reached the adapter (body already parsed): what follows it through the adapter. */
  begin(req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string): LegacyVisit;
}

/**
 * One request's way through the adapter. It ends in exactly one of `answered` (the shim wrote the
 * answer) or `forwarded` (the upstream did), so that a forwarded request costs no listener of its own.
 */
export interface LegacyVisit {
  /** The request's session, once verified. */
  admitted(session: SessionRecord): void;
  /** The answer about to be written. */
  answered(reply: Reply): void;
  /** Forwarded to the upstream: called once the client's response closed, with its HTTP status. */
  forwarded(status: number): void;
}
