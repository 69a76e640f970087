import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, ParseError, ShimError } from '../core/errors.js';
import { errorResponse, idOf, parseJson } from '../wire/jsonrpc/message.js';
import { json, type Reply } from '../wire/reply.js';
import type { WireAdapter, WireRequest } from '../wire/request.js';
import type { Authenticator, AuthOutcome } from './auth/bearer.js';
import { detectBodylessEra, detectEra } from './era.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import type { LegacyHooks, LegacyVisit } from './legacy-hooks.js';
import type { OpenStreams } from './open-streams.js';
import { BodyTooLargeError, readBody } from './read-body.js';
import { writeReply } from './write-reply.js';

export interface McpEndpointOptions {
  sep2663: WireAdapter;
  /** Legacy-era requests (sessions, GET streams, DELETE); absent until that wire is configured. */
  legacy?: WireAdapter;
  /** Where every SSE answer registers, and the bytes it may leave unsent. */
  streams: OpenStreams;
  /** Traffic recording of old-API requests (src/observe/wire-hooks.ts). */
  legacyHooks?: LegacyHooks;
  authenticate: Authenticator;
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  /**
   * The cutover stage (src/cutover/stage.ts), before the legacy adapter: adds the old API's headers
   * and may answer in the adapter's place (brownout, drain, legacy mode off).
   */
  cutover?: (res: ServerResponse, parsed: unknown) => Reply | undefined;
  /** Sees every answer the cutover stage gave (traffic recording); synchronous, never throws. */
  observeRefusal?: (req: IncomingMessage, parsed: unknown, principal: string, reply: Reply) => void;
  /** Sees every SEP-2663 answer (traffic recording); synchronous, never throws. */
  observe?: (req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string, reply: Reply, startedAt: number) => void;
}

/**
 * The hot path: POST /mcp on plain node:http, with no framework in front, since clients poll
 * `tasks/get` all the time (docs/architecture.md, "Layers"). Checks run in the order of
 * docs/architecture.md, "Order of checks on the 2026-07-28 wire".
 */
export function createMcpEndpoint(options: McpEndpointOptions) {
  return async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = await route(req, res, options);
    if (reply) await writeReply(res, reply, options.streams);
  };
}

async function route(req: IncomingMessage, res: ServerResponse, options: McpEndpointOptions): Promise<Reply | undefined> {
  const origin = req.headers.origin;
  if (origin !== undefined && !options.allowedOrigins.includes(origin)) {
    req.resume();
    return json(403, errorResponse(null, new InvalidRequestError(`Origin '${origin}' is not allowed`)));
  }
  let outcome = options.authenticate(req.headers, req.socket.remoteAddress);
  if (outcome instanceof Promise) outcome = await outcome;
  if ('rejected' in outcome) {
    req.resume();
    return unauthorized(outcome.rejected);
  }
  const { principal } = outcome;
  if (req.method !== 'POST') {
    if (options.legacy && detectBodylessEra(req.headers) === 'legacy') {
      req.resume();
      const refusal = refuse(req, res, undefined, principal, options);
      if (refusal) return refusal;
      await serveLegacy(options.legacy, req, res, undefined, undefined, principal, options);
      return undefined;
    }
    req.resume();
    return { kind: 'empty', status: 405, headers: { allow: 'POST' } };
  }
  const contentType = req.headers['content-type'];
  if (contentType !== 'application/json' && (!contentType || !/^application\/json\s*(;|$)/i.test(contentType))) {
    req.resume();
    return json(415, errorResponse(null, new InvalidRequestError('Content-Type must be application/json')));
  }
  if (!acceptsAnswer(req.headers.accept)) {
    req.resume();
    return json(406, errorResponse(null, new InvalidRequestError('Accept must allow application/json or text/event-stream')));
  }

  let body: Buffer;
  try {
    body = await readBody(req, options.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return json(413, errorResponse(null, new InvalidRequestError(err.message)), { connection: 'close' });
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = parseJson(body);
  } catch (err) {
    return json(400, errorResponse(null, err instanceof ShimError ? err : new ParseError()));
  }
  // Before any wire looks at it: a client error, never worth a retry (docs/security.md, "Bounds").
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    return json(400, errorResponse(idOf(parsed), new InvalidRequestError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)));
  }

  if (detectEra(req.headers, parsed) === 'legacy') {
    if (options.legacy) {
      const refusal = refuse(req, res, parsed, principal, options);
      if (refusal) return refusal;
      const handled = serveLegacy(options.legacy, req, res, body, parsed, principal, options);
      if (handled) await handled;
      return undefined;
    }
    return json(400, errorResponse(null, new InvalidRequestError('this endpoint serves MCP 2026-07-28 only')));
  }

  const startedAt = performance.now();
  const reply = await options.sep2663.handle(wireRequest(req, res, body, parsed, principal, undefined));
  options.observe?.(req, res, parsed, principal, reply, startedAt);
  return reply;
}

/**
 * The legacy adapter's answer, written. A forward the adapter routes at once (the session read a
 * moment ago) is relayed without a promise of the edge's own either: passthrough is a hot path.
 */
function serveLegacy(
  adapter: WireAdapter,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  parsed: unknown,
  principal: string,
  options: McpEndpointOptions,
): Promise<void> | undefined {
  const visit = options.legacyHooks?.begin(req, res, parsed, principal);
  const reply = adapter.handle(wireRequest(req, res, body, parsed, principal, visit));
  return reply instanceof Promise ? reply.then((answer) => deliver(res, answer, visit, options)) : deliver(res, reply, visit, options);
}

function deliver(res: ServerResponse, reply: Reply, visit: LegacyVisit | undefined, options: McpEndpointOptions): Promise<void> | undefined {
  // The upstream's answers are recorded with the client's status once the response closed.
  if (reply.kind !== 'relay') {
    if (!('fromUpstream' in reply && reply.fromUpstream)) visit?.answered(reply);
    else if (visit) res.once('close', () => visit.forwarded(res.statusCode));
  }
  return writeReply(res, reply, options.streams, visit);
}

function wireRequest(req: IncomingMessage, res: ServerResponse, rawBody: Buffer | undefined, body: unknown, principal: string, visit: LegacyVisit | undefined): WireRequest {
  return { method: req.method ?? 'GET', headers: req.headers, rawHeaders: req.rawHeaders, body, rawBody, principal, signal: closeSignal(res), visit };
}

function refuse(req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string, options: McpEndpointOptions): Reply | undefined {
  const refusal = options.cutover?.(res, parsed);
  if (refusal) options.observeRefusal?.(req, parsed, principal, refusal);
  return refusal;
}

const UNAUTHORIZED = {
  missing: { message: 'Missing bearer token', challenge: 'Bearer' },
  invalid: { message: 'Invalid bearer token', challenge: 'Bearer error="invalid_token"' },
  expired: { message: 'Expired bearer token', challenge: 'Bearer error="invalid_token", error_description="The token expired"' },
} as const;

/** RFC 6750 §3: the challenge says whether a token was refused, never why beyond expiry. */
function unauthorized(reason: Extract<AuthOutcome, { rejected: string }>['rejected']): Reply {
  const { message, challenge } = UNAUTHORIZED[reason];
  return json(401, errorResponse(null, new InvalidRequestError(message)), { 'www-authenticate': challenge });
}

/**
 * A client that closes its response early cancels the request (and an unannounced task). Only
 * methods that wait on something take the signal, so the controller and its listener are made on
 * first use: a tasks/get never pays for them.
 */
function closeSignal(res: ServerResponse): () => AbortSignal {
  let abort: AbortController | undefined;
  return () => {
    if (!abort) {
      abort = new AbortController();
      const controller = abort;
      if (res.destroyed && !res.writableFinished) controller.abort();
      else res.once('close', () => !res.writableFinished && controller.abort());
    }
    return abort.signal;
  };
}

function acceptsAnswer(accept: string | undefined): boolean {
  if (!accept || accept.includes('application/json')) return true;
  return /(\*\/\*|application\/\*|application\/json|text\/event-stream|text\/\*)/i.test(accept);
}
