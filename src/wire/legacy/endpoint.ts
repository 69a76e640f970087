import {
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  LimitExceededError,
  MethodNotFoundError,
  ShimError,
  TaskNotFoundError,
  UnavailableError,
} from '../../core/errors.js';
import type { SessionRecord } from '../../session/session-store.js';
import { classify, errorResponse, idOf, resultResponse, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/message.js';
import { json, type RelayReply, type Reply } from '../reply.js';
import type { WireAdapter, WireRequest } from '../request.js';
import { parsePushId } from './constants.js';
import type { LegacyDeps } from './deps.js';
import { initialize } from './initialize.js';
import { SessionCache } from './session-cache.js';
import { rewriteToolsList } from './tools-list.js';
import { getStream, resultStream } from './streams.js';
import { LegacyTaskMethods, parseParams } from './task-methods.js';
import { TaskIdParams } from '../task-id.js';
import { MAX_TASK_ID_LENGTH, type StreamSlot } from '../../core/limits.js';

/** Methods the shim answers from the task store; every other message of a session is forwarded. */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'tasks/create', 'tasks/status']);
/** Requests `dispatch` looks at (the task methods, and the tool methods it may answer or rewrite); the rest go straight on. */
const DISPATCHED: ReadonlySet<string> = new Set([...TASK_METHODS, 'tools/call', 'tools/list']);

/**
 * The legacy wires (MCP 2025-11-25 tasks and the tasks/create dialect) on the session
 * transport. The shim owns the client's session; everything that is not a task reaches the
 * upstream unchanged in the upstream session it maps to.
 */
export class LegacyAdapter implements WireAdapter {
  private readonly methods: LegacyTaskMethods;
  private readonly sessions: SessionCache;

  constructor(private readonly deps: LegacyDeps) {
    this.methods = new LegacyTaskMethods(deps);
    this.sessions = new SessionCache(deps.sessions, deps.sessionIdleTtlMs);
  }

  /**
   * A forwarded message whose session this replica read a moment ago is answered without awaiting
   * anything (the relay of the upstream's answer), so that the hop adds no promise of its own:
   * only a Redis read or an answer the shim makes itself goes through `settle`.
   */
  handle(request: WireRequest): Reply | Promise<Reply> {
    let routed: Reply | Forward | Promise<Reply | Forward>;
    try {
      routed = this.route(request);
    } catch (err) {
      routed = unavailable(err, request.body);
    }
    if (routed instanceof Promise) return this.settle(request, routed);
    return routed instanceof Forward ? this.forward(request, routed) : routed;
  }

  private async settle(request: WireRequest, routing: Promise<Reply | Forward>): Promise<Reply> {
    let routed: Reply | Forward;
    try {
      routed = await routing;
    } catch (err) {
      routed = unavailable(err, request.body);
    }
    return routed instanceof Forward ? this.forward(request, routed) : routed;
  }

  /**
   * The upstream answers a forwarded message: the edge relays its answer as it comes. An upstream
   * without sessions gets the message translated instead (sessionless-upstream.ts); once the
   * upstream is known to keep sessions, the relay waits for nothing.
   */
  private forward(request: WireRequest, forward: Forward): Reply | Promise<Reply> {
    const bridge = this.deps.sessionless;
    if (!bridge || bridge.keepsSessions) return this.relay(request, forward);
    return bridge
      .active()
      .then((stateless) => (stateless ? bridge.serve(forward.clientSessionId, request.rawBody, request.signal()) : this.relay(request, forward)))
      .catch((err: unknown) => unavailable(err, request.body));
  }

  /** The upstream answers a forwarded message: the edge relays its answer as it comes. */
  private relay(request: WireRequest, forward: Forward): RelayReply {
    return {
      kind: 'relay',
      via: this.deps.upstream,
      request: {
        method: request.method,
        rawHeaders: request.rawHeaders,
        body: request.rawBody,
        upstreamSessionId: forward.upstreamSessionId,
        clientSessionId: forward.clientSessionId,
      },
      unreachable: upstreamUnreachable,
    };
  }

  private route(request: WireRequest): Reply | Forward | Promise<Reply | Forward> {
    if (request.method === 'POST') {
      let message;
      try {
        message = classify(request.body);
      } catch (err) {
        return json(400, errorResponse(null, err as ShimError));
      }
      if (message.kind === 'request' && message.message.method === 'initialize') {
        return initialize(this.deps, message.message, request.principal);
      }
      const forwardable = message.kind !== 'request' || !TASK_METHODS.has(message.message.method);
      const session = this.session(request, forwardable);
      return session instanceof Promise ? session.then((found) => this.routeMessage(found, message)) : this.routeMessage(session, message);
    }
    return this.routeBodyless(request);
  }

  private routeMessage(session: SessionRecord | Reply, message: JsonRpcMessage): Reply | Forward | Promise<Reply | Forward> {
    if (!isSession(session)) return session;
    switch (message.kind) {
      case 'response':
        return this.answer(session, message.message);
      case 'notification':
        return new Forward(session);
      case 'request':
        return DISPATCHED.has(message.message.method) ? this.request(session, message.message) : new Forward(session);
    }
  }

  private async routeBodyless(request: WireRequest): Promise<Reply> {
    const session = await this.session(request);
    if (!isSession(session)) return session;
    if (request.method === 'GET') return this.get(request, session);
    if (request.method === 'DELETE') {
      this.sessions.forget(session.sessionId);
      await this.deps.sessions.delete(session.sessionId);
      void this.deps.service.releaseSession(session.principal, session.sessionId).catch(() => undefined);
      if (session.upstreamSessionId) void this.deps.upstream.deleteSession(session.upstreamSessionId).catch(() => undefined);
      return { kind: 'empty', status: 200 };
    }
    return { kind: 'empty', status: 405, headers: { allow: 'GET, POST, DELETE' } };
  }

  /**
   * 400 without a session id, 404 for an unknown or foreign one (a session is its principal's).
   * A forwardable message takes the session from this replica's recent read, at once.
   */
  private session(request: WireRequest, forwardable = false): SessionRecord | Reply | Promise<SessionRecord | Reply> {
    const header = request.headers['mcp-session-id'];
    if (typeof header !== 'string' || header === '') {
      return json(400, errorResponse(null, new InvalidRequestError('Mcp-Session-Id header is required (initialize first)')));
    }
    const found = forwardable ? this.sessions.get(header) : this.sessions.read(header);
    return found instanceof Promise ? found.then((session) => this.verify(request, session)) : this.verify(request, found);
  }

  private verify(request: WireRequest, session: SessionRecord | undefined): SessionRecord | Reply {
    if (!session || session.principal !== request.principal) {
      return json(404, errorResponse(null, new ShimError(-32001, 'Session not found')));
    }
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string' && version !== session.protocolVersion) {
      return json(400, errorResponse(null, new InvalidRequestError(`MCP-Protocol-Version '${version}' does not match the session's '${session.protocolVersion}'`)));
    }
    request.visit?.admitted(session);
    return session;
  }

  /**
   * A client's answer to a pushed input request settles that key, checked as tasks/update checks
   * one; anything else is the upstream's. Unknown, foreign, stale and duplicate answers are
   * ignored alike (202: the client learns nothing from them); a malformed one is refused with 400
   * and its JSON-RPC error, and its key stays outstanding (MCP 2025-11-25, Transports › Streamable HTTP and Utilities › Tasks, input_required).
   */
  private async answer(session: SessionRecord, response: JsonRpcResponse): Promise<Reply | Forward> {
    const push = parsePushId(response.id);
    if (push && push.taskId.length > MAX_TASK_ID_LENGTH) return { kind: 'empty', status: 202 };
    if (!push) return new Forward(session);
    const answer = 'result' in response ? { result: stripMeta(response.result) } : { error: response.error };
    try {
      await this.deps.service.answerPush(session.principal, push.taskId, push.key, answer);
    } catch (err) {
      if (err instanceof TaskNotFoundError) return { kind: 'empty', status: 202 };
      if (err instanceof InvalidParamsError) return json(400, errorResponse(null, err));
      throw err;
    }
    return { kind: 'empty', status: 202 };
  }

  private async request(session: SessionRecord, request: JsonRpcRequest): Promise<Reply | Forward> {
    try {
      const answer = await this.dispatch(session, request);
      if (answer instanceof Forward) return answer;
      if ('reply' in answer) return answer.reply;
      return json(200, resultResponse(request.id, answer.result));
    } catch (err) {
      return json(200, errorResponse(request.id, err instanceof ShimError ? err : new InternalError()));
    }
  }

  private async dispatch(session: SessionRecord, request: JsonRpcRequest): Promise<Answer> {
    const { params } = request;
    const dialect = session.usesTasksCreate === true;
    switch (request.method) {
      case 'tools/call':
        if (params?.task !== undefined) return { result: await this.methods.toolsCallAsTask(session, params) };
        if (typeof params?.name === 'string' && (await this.deps.service.policyFor(params.name)).mode === 'required') {
          throw new MethodNotFoundError('tools/call', `tool '${params.name}' requires task-augmented execution (params.task)`);
        }
        break;
      case 'tools/list':
        return { reply: await rewriteToolsList(this.deps, session, request) };
      case 'tasks/get':
        return { result: await this.methods.tasksGet(session, params) };
      case 'tasks/result':
        return { reply: await this.result(session, request) };
      case 'tasks/list':
        return { result: await this.methods.tasksList(session, params, dialect) };
      case 'tasks/cancel':
        return { result: await this.methods.tasksCancel(session, params, dialect || (await this.createdByDialect(session, params))) };
      case 'tasks/create':
        await this.markDialect(session);
        return { result: await this.methods.tasksCreate(session, params) };
      case 'tasks/status':
        await this.markDialect(session);
        return { result: await this.methods.tasksStatus(session, params) };
      default:
        break;
    }
    return new Forward(session);
  }

  private async result(session: SessionRecord, request: JsonRpcRequest): Promise<Reply> {
    const { taskId } = parseParams(TaskIdParams, request.params);
    await this.methods.touch(session, taskId);
    this.deps.streams.admit();
    const slot = await this.deps.service.openStream(session.principal);
    return { kind: 'sse', stream: resultStream(this.deps, session, taskId, request.id, slot) };
  }

  private async get(request: WireRequest, session: SessionRecord): Promise<Reply> {
    const lastEventId = request.headers['last-event-id'];
    // An id we never issued (or whose log expired) has nothing to replay: a fresh stream then.
    const log = typeof lastEventId === 'string' && lastEventId !== '' ? await this.deps.sessions.eventsAfter(session.sessionId, lastEventId) : undefined;
    let slot: StreamSlot;
    try {
      this.deps.streams.admit();
      slot = await this.deps.service.openStream(session.principal);
    } catch (err) {
      if (err instanceof LimitExceededError) return json(429, errorResponse(null, err));
      throw err;
    }
    if (!log) return { kind: 'sse', stream: getStream(this.deps, session, slot) };
    const resume = { streamId: log.streamId, events: log.events };
    const meta = log.meta;
    return {
      kind: 'sse',
      stream: meta.kind === 'result' ? resultStream(this.deps, session, meta.taskId, meta.requestId, slot, resume) : getStream(this.deps, session, slot, resume),
    };
  }

  /** A session that uses tasks/create gets the dialect's answers on the methods both wires share. */
  private async markDialect(session: SessionRecord): Promise<void> {
    if (session.usesTasksCreate) return;
    session.usesTasksCreate = true;
    await this.deps.sessions.update(session.sessionId, { usesTasksCreate: true });
  }

  private async createdByDialect(session: SessionRecord, params: Record<string, unknown> | undefined): Promise<boolean> {
    const taskId = params?.taskId;
    // A malformed id is refused by tasks/cancel itself, before any store access.
    if (typeof taskId !== 'string' || taskId.length > MAX_TASK_ID_LENGTH) return false;
    const task = await this.deps.service.findTask(session.principal, taskId);
    return task?.origin === 'tasks-create';
  }
}

/** A message the upstream answers, within the session it maps to. */
class Forward {
  readonly clientSessionId: string;
  readonly upstreamSessionId: string | undefined;

  constructor(session: SessionRecord) {
    this.clientSessionId = session.sessionId;
    this.upstreamSessionId = session.upstreamSessionId;
  }
}

/** A request the shim answered itself, or one it forwards to the upstream (which answers it). */
type Answer = { result: Record<string, unknown> } | { reply: Reply } | Forward;

function isSession(value: SessionRecord | Reply): value is SessionRecord {
  return 'sessionId' in value;
}

function stripMeta(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _dropped, ...rest } = result;
  return rest;
}

/** The legacy wire's answer when a forwarded message cannot reach the upstream (sent with HTTP 502). */
export function upstreamUnreachable(err: Error): unknown {
  return errorResponse(null, new InternalError(`Upstream unreachable: ${err.message}`));
}

/**
 * Redis (or another dependency) was unreachable before any answer was written, e.g. while looking
 * up the session: a request gets the retryable error under its id, as the SEP-2663 wire answers;
 * anything without a request id (GET, DELETE, notifications, responses) gets 503.
 */
function unavailable(err: unknown, parsed: unknown): Reply {
  if (!(err instanceof UnavailableError)) throw err;
  const id = typeof parsed === 'object' && parsed !== null && 'method' in parsed ? idOf(parsed) : null;
  return id === null ? json(503, errorResponse(null, err), { 'retry-after': '1' }) : json(200, errorResponse(id, err));
}
