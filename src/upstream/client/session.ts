import { ErrorCode, ShimError, UnavailableError, UpstreamRpcError } from '../../core/errors.js';

import type { InputRequest } from '../../core/task.js';
import type { AnswerReader, JsonRpcMessage } from './answer-reader.js';
import { resultOf, SessionGoneError, translateFailure } from './rpc-failure.js';
import type { RequestHeaders, UpstreamRpc } from './rpc-client.js';

/** The revision the shim's sessions ask for, and those it accepts an upstream to answer with. */
export const SESSION_PROTOCOL_VERSION = '2025-11-25';
const ACCEPTED_VERSIONS: ReadonlySet<string> = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']);

const OPEN_TIMEOUT_MS = 10_000;
const OPEN_ATTEMPTS = 3;
const OPEN_RETRY_MS = 200;

/** The input kinds a session can relay, each answered by whoever holds the call that asked. */
export const INPUT_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} } as const;
const INPUT_METHODS: ReadonlySet<string> = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

/** Answers one server → client request (elicitation, sampling, roots); `id` is the upstream's JSON-RPC id. */
export type UpstreamInputHandler = (request: InputRequest, id: string | number, signal: AbortSignal) => Promise<Record<string, unknown>>;

export interface SessionOptions {
  clientInfo: { name: string; version: string };
  /** What the session declares it can answer: `INPUT_CAPABILITIES`, or nothing for calls that take no input. */
  capabilities: Record<string, unknown>;
  /** Follow the session's GET stream, where an upstream sends what it does not tie to a request. */
  stream: boolean;
  /** Hears the GET stream break (for the log). */
  onStreamError?: (err: Error) => void;
}

export interface SessionRequestOptions {
  /** Every request is bounded: no answer by then is the upstream's silence (UnavailableError). */
  timeoutMs: number;
  /** Aborting sends `notifications/cancelled` upstream, and the request rejects with an AbortError. */
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /** Requests the upstream ties to this one (on its answer's stream); without a handler they get -32601. */
  onInput?: UpstreamInputHandler;
}

/**
 * One MCP session with the upstream (2025-era Streamable HTTP), framed by hand on the shim's one
 * HTTP client: `initialize` once (or rejoin a known session id), then requests each on its own
 * POST, their answers read as they come. Requests and notifications the upstream sends on a
 * request's answer stream belong to that request (its `onInput`, its progress); those on the GET
 * stream go to `input` (the session's current holder) and to `onNotification`. A request with no
 * one to answer it is left unanswered: it was not meant for this session's holder.
 */
export class UpstreamSession {
  /** Requests the upstream sent us that are still being answered, by id: a `notifications/cancelled` aborts one. */
  private readonly serving = new Map<string | number, AbortController>();
  private readonly progress = new Map<number, (message: string) => void>();
  private readonly inflight = new Set<AnswerReader>();
  /** The headers of every request in this session. */
  private readonly headers: RequestHeaders;
  private nextId = 1;
  private stopStream: (() => void) | undefined;
  private closed = false;
  /** Whoever holds the session answers the requests the upstream sends on its GET stream. */
  input: UpstreamInputHandler | undefined;
  /** Hears every notification the upstream sends that no request of ours claims (task status, logs, …). */
  onNotification: ((message: JsonRpcMessage) => void) | undefined;

  private constructor(
    private readonly rpc: UpstreamRpc,
    readonly sessionId: string | undefined,
    readonly protocolVersion: string,
    readonly serverCapabilities: Record<string, unknown>,
  ) {
    const headers: Record<string, string> = { 'mcp-protocol-version': protocolVersion };
    if (sessionId) headers['mcp-session-id'] = sessionId;
    this.headers = rpc.headers(headers);
  }

  /** `initialize` and `notifications/initialized`; UpstreamRpcError if the upstream refuses, UnavailableError if it does not answer. */
  static async open(rpc: UpstreamRpc, options: SessionOptions, timeoutMs: number): Promise<UpstreamSession> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: SESSION_PROTOCOL_VERSION, capabilities: options.capabilities, clientInfo: options.clientInfo },
    });
    const reader = rpc.send(body, 0, rpc.headers({}));
    const timer = setTimeout(() => reader.abort(new UnavailableError(`upstream (no answer to initialize within ${timeoutMs} ms)`)), timeoutMs);
    let result: Record<string, unknown>;
    let sessionId: string | undefined;
    try {
      const answer = await reader.answer;
      result = resultOf('initialize', answer, false);
      const header = answer.headers['mcp-session-id'];
      sessionId = typeof header === 'string' && header !== '' ? header : undefined;
    } catch (err) {
      throw translateFailure(err, 'initialize');
    } finally {
      clearTimeout(timer);
    }
    const version = result.protocolVersion;
    if (typeof version !== 'string' || !ACCEPTED_VERSIONS.has(version)) {
      throw new UpstreamRpcError(ErrorCode.InternalError, `the upstream answered initialize with protocol version ${String(version)}, which the shim does not speak`);
    }
    const capabilities = typeof result.capabilities === 'object' && result.capabilities !== null ? (result.capabilities as Record<string, unknown>) : {};
    const session = new UpstreamSession(rpc, sessionId, version, capabilities);
    await session.notify('notifications/initialized', undefined);
    if (options.stream && sessionId) session.follow(options.onStreamError);
    return session;
  }

  /**
   * `open`, again while the upstream cannot be reached (OPEN_ATTEMPTS in all): opening sends no
   * tool call, so a failed attempt (a reset or refused connection while the upstream is swamped)
   * is safe to repeat; a JSON-RPC error will not change the upstream's mind.
   */
  static async openRetrying(rpc: UpstreamRpc, options: SessionOptions, stopped: () => boolean = () => false): Promise<UpstreamSession> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await UpstreamSession.open(rpc, options, OPEN_TIMEOUT_MS);
      } catch (err) {
        if (attempt >= OPEN_ATTEMPTS || stopped() || !(err instanceof UnavailableError)) throw err;
        await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS * attempt));
      }
    }
  }

  /**
   * The session a mirror ran in before its replica died, rejoined without `initialize` (the
   * upstream keeps it until told otherwise). Task sessions exist from 2025-11-25 on.
   */
  static rejoin(rpc: UpstreamRpc, sessionId: string, options: Pick<SessionOptions, 'onStreamError'>): UpstreamSession {
    const session = new UpstreamSession(rpc, sessionId, SESSION_PROTOCOL_VERSION, {});
    session.follow(options.onStreamError);
    return session;
  }

  /** One request; its result, or UpstreamRpcError (the upstream's answer), UnavailableError (none), an AbortError. */
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new UnavailableError(`upstream (${method}: the session is closed)`));
    const id = this.nextId++;
    const onProgress = options.onProgress;
    let sent = params;
    if (onProgress) {
      this.progress.set(id, onProgress);
      sent = { ...params, _meta: { ...(params?._meta as Record<string, unknown> | undefined), progressToken: id } };
    }
    const body = JSON.stringify(sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent });
    const onInput = options.onInput;
    const reader = this.rpc.send(body, id, this.headers, (message) => this.receive(message, onInput ?? null));
    this.inflight.add(reader);
    const signal = options.signal;
    let stop: (() => void) | undefined;
    if (signal) {
      stop = () => this.cancel(reader, id, Object.assign(new Error(`${method} aborted`), { name: 'AbortError' }));
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    }
    const timer = setTimeout(() => this.cancel(reader, id, new UnavailableError(`upstream (no answer to ${method} within ${options.timeoutMs} ms)`)), options.timeoutMs);
    return reader.answer.then(
      (answer) => {
        this.done(reader, id, timer, signal, stop);
        return resultOf(method, answer, this.sessionId !== undefined);
      },
      (err: unknown) => {
        this.done(reader, id, timer, signal, stop);
        throw err instanceof Error && err.name === 'AbortError' ? err : translateFailure(err, method);
      },
    );
  }

  /** A notification to the upstream in this session. */
  async notify(method: string, params: Record<string, unknown> | undefined): Promise<void> {
    const status = await this.rpc.deliver(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, this.headers).catch((err: unknown) => {
      throw translateFailure(err, method);
    });
    if (status === 404 && this.sessionId) throw new SessionGoneError(method);
  }

  /** Answers a request the upstream sent (an elicitation …), also one a lost mirror received, by its id. */
  async respond(id: string | number, answer: { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } }): Promise<void> {
    await this.rpc.deliver({ jsonrpc: '2.0', id, ...answer }, this.headers).catch((err: unknown) => {
      throw translateFailure(err, 'a response');
    });
  }

  /** Stops reading; with `terminate`, ends the session at the upstream (DELETE). */
  async close(terminate: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopStream?.();
    for (const reader of this.inflight) reader.abort(new UnavailableError('upstream (the session was closed)'));
    for (const serving of this.serving.values()) serving.abort();
    if (terminate && this.sessionId) await this.rpc.deleteSession(this.sessionId, this.protocolVersion).catch(() => undefined);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private follow(onError: ((err: Error) => void) | undefined): void {
    if (!this.sessionId) return;
    this.stopStream = this.rpc.openStream(this.sessionId, (message) => this.receive(message, undefined), { protocolVersion: this.protocolVersion, onError });
  }

  /**
   * A message from the upstream other than a response of ours. `onInput` is the handler of the
   * request on whose stream it came (null: that request has none), undefined for the GET stream.
   */
  private receive(message: JsonRpcMessage, onInput: UpstreamInputHandler | null | undefined): void {
    const method = message.method;
    if (typeof method !== 'string') return;
    const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Record<string, unknown>;
    if (message.id === undefined || message.id === null) {
      this.notified(method, params, message);
      return;
    }
    const id = message.id as string | number;
    if (method === 'ping') {
      void this.respond(id, { result: {} }).catch(() => undefined);
      return;
    }
    const handler = onInput === undefined ? this.input : onInput;
    if (handler === undefined) return;
    if (handler === null || !INPUT_METHODS.has(method)) {
      void this.respond(id, { error: { code: ErrorCode.MethodNotFound, message: `${method} is not available for this call` } }).catch(() => undefined);
      return;
    }
    const { _meta: _ignored, ...request } = params;
    const abort = new AbortController();
    this.serving.set(id, abort);
    handler({ method, params: request }, id, abort.signal)
      .then(
        (result) => ({ result }),
        (err: unknown) => ({ error: err instanceof ShimError ? err.toJsonRpc() : { code: ErrorCode.InternalError, message: err instanceof Error ? err.message : String(err) } }),
      )
      .then((answer) => (abort.signal.aborted && this.closed ? undefined : this.respond(id, answer)))
      .catch(() => undefined)
      .finally(() => this.serving.delete(id));
  }

  private notified(method: string, params: Record<string, unknown>, message: JsonRpcMessage): void {
    if (method === 'notifications/progress') {
      const listener = this.progress.get(params.progressToken as number);
      if (listener) {
        const { progress, total, message: text } = params as { progress?: unknown; total?: unknown; message?: unknown };
        listener(typeof text === 'string' ? text : total === undefined ? `${String(progress)}` : `${String(progress)}/${String(total)}`);
        return;
      }
    } else if (method === 'notifications/cancelled') {
      this.serving.get(params.requestId as string | number)?.abort();
      return;
    }
    this.onNotification?.(message);
  }

  /** A request given up (aborted, timed out): the upstream is told, as the official client does. */
  private cancel(reader: AnswerReader, id: number, reason: Error): void {
    reader.abort(reason);
    void this.notify('notifications/cancelled', { requestId: id, reason: reason.message }).catch(() => undefined);
  }

  private done(reader: AnswerReader, id: number, timer: NodeJS.Timeout, signal: AbortSignal | undefined, stop: (() => void) | undefined): void {
    clearTimeout(timer);
    this.inflight.delete(reader);
    this.progress.delete(id);
    if (stop) signal!.removeEventListener('abort', stop);
  }
}
