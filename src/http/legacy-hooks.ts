import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionRecord } from '../session/session-store.js';
import type { Reply } from '../wire/reply.js';
import type { RelayObserver } from './relay.js';

/**
 * Where the traffic recorder looks at old-API traffic as the HTTP edge hands it to the legacy
 * adapter and writes its answer. It only listens: the cutover stage in front of the adapter
 * decides refusals. Optional, and each call is synchronous and cheap.
 */
export interface LegacyHooks {
  /** A request is about to reach the adapter (body already parsed): what follows it through. */
  begin(req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string): LegacyVisit;
}

/**
 * One request's way through the adapter. It ends in exactly one of `answered` (the shim made the
 * answer) or `forwarded` (the upstream did), so that a forwarded request costs no listener of its own.
 */
export interface LegacyVisit extends RelayObserver {
  /** The request's session, once the adapter verified it. */
  admitted(session: SessionRecord): void;
  /** The answer about to be written. */
  answered(reply: Reply): void;
}
