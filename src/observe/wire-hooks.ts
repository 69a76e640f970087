import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { SessionRecord } from '../session/session-store.js';
import type { LegacyHooks, LegacyVisit } from '../http/legacy-hooks.js';
import type { Reply } from '../wire/reply.js';
import { META } from '../wire/sep2663/constants.js';
import { outcomeOf, type ObservedWire, type Outcome, type Recorder } from './events.js';

type Message = Record<string, unknown> & { params?: Record<string, unknown> };

/**
 * The old API's recording hooks: every request is recorded with the wire it used, which only the
 * adapter's outcome tells (forwarded means passthrough). They decide nothing: the cutover stage
 * in front of the adapter refuses what it refuses, and `refused` records those answers.
 */
export class OldApiHooks implements LegacyHooks {
  constructor(
    private readonly recorder: Recorder,
    /** The session of a refused request, for attributing it to its client (an idle-TTL refresh, as any request of the session). */
    private readonly sessionOf: (sessionId: string) => Promise<SessionRecord | undefined>,
  ) {}

  begin(req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string): LegacyVisit {
    return new OldApiVisit(this.recorder, req, res, asMessage(parsed), principal);
  }

  /**
   * An answer the cutover stage gave in the adapter's place. Refused calls are still old-API
   * traffic that holds the cutover, so they are recorded like the others, attributed to the
   * session's client once the session is read (off the request's path: the answer is already out).
   */
  refused(req: IncomingMessage, parsed: unknown, principal: string, reply: Reply): void {
    const visit = new OldApiVisit(this.recorder, req, undefined, asMessage(parsed), principal, true);
    const at = performance.now();
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId !== 'string' || sessionId === '') {
      visit.answered(reply, at);
      return;
    }
    this.sessionOf(sessionId).then(
      (session) => {
        if (session?.principal === principal) visit.admitted(session);
        visit.answered(reply, at);
      },
      () => visit.answered(reply, at),
    );
  }
}

/** What the old-API hooks learn about one request on its way through the adapter. */
class OldApiVisit implements LegacyVisit {
  private readonly startedAt = performance.now();
  private session: SessionRecord | undefined;

  constructor(
    private readonly recorder: Recorder,
    private readonly req: IncomingMessage,
    /** Absent for a refusal: its answer is no stream. */
    private readonly res: ServerResponse | undefined,
    readonly message: Message | undefined,
    private readonly principal: string,
    private readonly refused = false,
  ) {}

  admitted(session: SessionRecord): void {
    this.recorder.sessionSeen(session.sessionId);
    this.session = session;
  }

  /** `at`: when the answer went out (performance.now()), when that was before this call. */
  answered(reply: Reply, at?: number): void {
    try {
      const method = this.method();
      this.record(method, false, replyOutcome(reply), at, reply);
      if (reply.kind === 'sse') this.res?.once('close', this.recorder.streamOpened(method === 'GET' ? 'legacy-get' : 'legacy-result'));
    } catch {
      // Recording never fails a request.
    }
  }

  forwarded(status: number): void {
    try {
      // The upstream answered, and its HTTP status is all the shim sees of the outcome.
      this.record(this.method(), true, outcomeOf(undefined, status));
    } catch {
      // Recording never fails a request.
    }
  }

  private method(): string {
    return this.req.method !== 'POST' ? (this.req.method ?? 'GET') : methodOf(this.message);
  }

  private record(method: string, forwarded: boolean, outcome: Outcome, at = performance.now(), reply?: Reply): void {
    const { message, session, req } = this;
    const params = message?.params;
    const clientInfo = session?.clientInfo ?? (method === 'initialize' ? clientInfoOf(params?.clientInfo) : undefined);
    this.recorder.record({
      wire: legacyWire(method, params, session, forwarded, this.refused),
      method,
      tool: toolOf(method, params),
      clientName: clientInfo?.name,
      clientVersion: clientInfo?.version,
      principal: this.principal,
      protocolVersion: session?.protocolVersion ?? stringOr(params?.protocolVersion, header(req.headers, 'mcp-protocol-version')),
      outcome,
      latencyMs: at - this.startedAt,
      params,
      reply,
    });
  }
}

/**
 * The SEP-2663 hook, called with the handler's answer: everything it records is in the request
 * (`_meta` client info and version) and the answer (the error code).
 */
export function observeSep2663(recorder: Recorder) {
  return (req: IncomingMessage, res: ServerResponse, parsed: unknown, principal: string, reply: Reply, startedAt: number): void => {
    try {
      const message = asMessage(parsed);
      const method = methodOf(message);
      const params = message?.params;
      const meta = params?._meta as Record<string, unknown> | undefined;
      const info = meta?.[META.clientInfo] as { name?: unknown; version?: unknown } | undefined;
      // As clientInfoOf reads it, without making the object.
      const named = typeof info?.name === 'string';
      recorder.record({
        wire: 'sep2663',
        method,
        tool: toolOf(method, params),
        clientName: named ? (info!.name as string) : undefined,
        clientVersion: named ? (typeof info!.version === 'string' ? info!.version : '') : undefined,
        principal,
        protocolVersion: stringOr(meta?.[META.protocolVersion], header(req.headers, 'mcp-protocol-version')),
        outcome: replyOutcome(reply),
        latencyMs: performance.now() - startedAt,
        params,
        reply,
      });
      if (reply.kind === 'sse') res.once('close', recorder.streamOpened('listen'));
    } catch {
      // Recording never fails a request.
    }
  };
}

/**
 * The wire of an old-API request. Forwarded requests are `passthrough`, and so are `initialize`
 * and `tools/list` (forwarded, then lightly rewritten). Task methods belong to the dialect when
 * the session speaks it.
 */
export function legacyWire(
  method: string,
  params: Record<string, unknown> | undefined,
  session: SessionRecord | undefined,
  forwarded: boolean,
  refused: boolean,
): ObservedWire {
  if (forwarded) return 'passthrough';
  switch (method) {
    case 'tasks/create':
    case 'tasks/status':
      return 'tasks-create';
    case 'tools/call':
      // A plain call the shim answered itself is a task rule (a required tool); refused by the cutover stage it was passthrough.
      return params?.task !== undefined || !refused ? 'mcp-2025-11-25' : 'passthrough';
    case 'tasks/get':
    case 'tasks/result':
    case 'tasks/list':
    case 'tasks/cancel':
    case 'GET':
    case 'response':
      return session?.usesTasksCreate ? 'tasks-create' : 'mcp-2025-11-25';
    default:
      return 'passthrough';
  }
}

function replyOutcome(reply: Reply): Outcome {
  if (reply.kind === 'sse' || reply.kind === 'relay') return 'ok';
  if (reply.kind === 'empty' || reply.kind === 'json-text') return outcomeOf(undefined, reply.status);
  const error = (reply.body as { error?: { code?: unknown } } | undefined)?.error;
  return outcomeOf(typeof error?.code === 'number' ? error.code : undefined, reply.status);
}

function asMessage(parsed: unknown): Message | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const message = parsed as Message;
  if (message.params !== undefined && (typeof message.params !== 'object' || message.params === null)) return { ...message, params: undefined };
  return message;
}

function methodOf(message: Message | undefined): string {
  if (typeof message?.method === 'string') return message.method;
  return message && ('result' in message || 'error' in message) ? 'response' : 'invalid';
}

function toolOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  return (method === 'tools/call' || method === 'tasks/create') && typeof params?.name === 'string' ? params.name : undefined;
}

function clientInfoOf(value: unknown): { name: string; version: string } | undefined {
  const info = value as { name?: unknown; version?: unknown } | undefined;
  if (typeof info?.name !== 'string') return undefined;
  return { name: info.name, version: typeof info.version === 'string' ? info.version : '' };
}

function stringOr(value: unknown, fallback: string | undefined): string | undefined {
  return typeof value === 'string' ? value : fallback;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
