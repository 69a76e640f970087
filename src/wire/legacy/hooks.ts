import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionRecord } from '../../session/session-store.js';
import type { Reply } from '../reply.js';

/**
 * Where the rest of the shim looks at old-API traffic without the adapter knowing why: the
 * cutover controls (headers, drain, brownout) and the traffic recorder. Optional, and each
 * call is synchronous and cheap.
 */
export interface LegacyHooks {
  /** Before routing (body already parsed): may answer the request itself. */
  before(req: IncomingMessage, res: ServerResponse, parsed: unknown): Reply | undefined;
  /** The request's session, once verified: may refuse the request. */
  admit(req: IncomingMessage, session: SessionRecord): Reply | undefined;
  /** The answer about to be written, or undefined when the request was forwarded to the upstream. */
  after(req: IncomingMessage, res: ServerResponse, principal: string, reply: Reply | undefined): void;
}
