import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../../core/errors.js';
import type { InputRequest } from '../../core/task.js';
import type { UpstreamRpc } from './rpc-client.js';
import { SessionGoneError } from './rpc-failure.js';
import { INPUT_CAPABILITIES, UpstreamSession, type SessionOptions } from './session.js';

/** Answers one server → client request (elicitation, sampling, roots) raised during a call. */
export type InputHandler = (request: InputRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;

export interface CallOptions {
  signal?: AbortSignal;
  /** Bounded by the task's TTL, never by a client library's default. */
  timeoutMs: number;
  onInput?: InputHandler;
  onProgress?: (message: string) => void;
}

export interface SessionPoolOptions {
  clientInfo: { name: string; version: string };
  /**
   * Idle sessions kept for calls that can take input; each one holds a session (and its GET
   * stream) on the upstream. Below the number of such concurrent calls, bursts open and end sessions.
   */
  maxIdle?: number;
  /** Sessions opened at once; a burst of calls waits its turn rather than flooding the upstream. */
  maxConnecting?: number;
  /**
   * Hears a failure to reach the upstream (no JSON-RPC answer: refused, closed, timed out), with
   * the operation that met it, for the log. An error the upstream answered is the caller's news.
   */
  onUnreachable?: (operation: string, err: unknown) => void;
}

const DEFAULT_MAX_IDLE = 16;
const DEFAULT_MAX_CONNECTING = 32;
/** A listing or a ping waits this long for each answer. */
const LIST_TIMEOUT_MS = 10_000;
/** A request that names no bound of its own (a client library's usual default). */
const REQUEST_TIMEOUT_MS = 60_000;
/** A listing is bounded: an upstream whose cursor never ends must not hold the replica. */
export const MAX_TOOL_PAGES = 100;
export const MAX_TOOLS = 10_000;

/**
 * The shim's sessions with a 2025-era upstream for calls of its own (docs/decisions/0032):
 *
 * - one **shared** session that declares no client capability carries every call that can take
 *   no input (most quick calls, translated requests, listings), many at once: the upstream ties
 *   what it sends to each request's own answer stream, and a conforming upstream asks no input of
 *   a session that declared none;
 * - **held** sessions that declare the input kinds carry one call at a time, so that a request
 *   the upstream sends on the session's GET stream, tied to no request, belongs to that call.
 *
 * A session the upstream forgot (404) is replaced and the request sent again once: nothing of it ran.
 */
export class SessionPool {
  private shared: Promise<UpstreamSession> | undefined;
  /** The shared session once open (what `shared` resolved to), so that a forgotten one is dropped at once. */
  private sharedOpen: UpstreamSession | undefined;
  private readonly idle: UpstreamSession[] = [];
  private readonly all = new Set<UpstreamSession>();
  /** Callers waiting for one of the `maxConnecting` turns to open a session. */
  private readonly connectQueue: Array<() => void> = [];
  private connecting = 0;
  private closed = false;

  constructor(
    private readonly rpc: UpstreamRpc,
    private readonly options: SessionPoolOptions,
  ) {}

  callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    const params = { name, arguments: args };
    const onInput = options.onInput;
    if (!onInput) {
      const plain = { timeoutMs: options.timeoutMs, signal: options.signal, onProgress: options.onProgress };
      return this.onShared(`tools/call ${name}`, (session) => session.request('tools/call', params, plain));
    }
    return this.onHeld(`tools/call ${name}`, (session) => {
      const input = (request: InputRequest, _id: string | number, signal: AbortSignal) => onInput(request, signal);
      session.input = input;
      return session.request('tools/call', params, { timeoutMs: options.timeoutMs, signal: options.signal, onProgress: options.onProgress, onInput: input });
    });
  }

  /** A plain request (resources, prompts, ping, translated for a stateless client). */
  request(method: string, params: Record<string, unknown> | undefined, signal?: AbortSignal, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Record<string, unknown>> {
    return this.onShared(method, (session) => session.request(method, params, { timeoutMs, signal }));
  }

  /** Every tool of the upstream, all pages, within MAX_TOOL_PAGES and MAX_TOOLS. */
  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= MAX_TOOL_PAGES) throw new UpstreamProtocolError(`the upstream's tools/list goes on past ${MAX_TOOL_PAGES} pages`);
      const answer = await this.request('tools/list', cursor === undefined ? undefined : { cursor }, undefined, LIST_TIMEOUT_MS);
      if (!Array.isArray(answer.tools)) throw new UpstreamProtocolError("the upstream's tools/list result has no tools array");
      for (const tool of answer.tools as unknown[]) {
        if (typeof tool !== 'object' || tool === null || typeof (tool as { name?: unknown }).name !== 'string') {
          throw new UpstreamProtocolError("the upstream's tools/list lists a tool without a name");
        }
        tools.push(tool as Tool);
      }
      if (tools.length > MAX_TOOLS) throw new UpstreamProtocolError(`the upstream's tools/list lists more than ${MAX_TOOLS} tools`);
      cursor = typeof answer.nextCursor === 'string' && answer.nextCursor !== '' ? answer.nextCursor : undefined;
      if (cursor === undefined) return tools;
    }
  }

  /** What the upstream said it serves when the shared session opened (the same for every session). */
  async capabilities(): Promise<Record<string, unknown>> {
    const session = await this.sharedSession('initialize');
    return session.serverCapabilities;
  }

  async ping(): Promise<boolean> {
    try {
      // Readiness probes ask often; their answer (`/readyz`) is the report.
      await this.onShared(undefined, (session) => session.request('ping', undefined, { timeoutMs: LIST_TIMEOUT_MS }));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    this.shared = undefined;
    this.sharedOpen = undefined;
    // The pool's sessions serve nobody after this: the upstream may let them go.
    await Promise.allSettled(sessions.map((session) => session.close(true)));
  }

  /** Runs `fn` on the shared session, on a new one if the upstream forgot it; `operation` names it to `onUnreachable`. */
  private onShared<T>(operation: string | undefined, fn: (session: UpstreamSession) => Promise<T>): Promise<T> {
    // The open session serves the call at once: no promise of the pool's own on a quick call's path.
    const open = this.sharedOpen;
    if (open && !this.closed) return fn(open).catch((err: unknown) => this.sharedFailed(operation, fn, open, err));
    return this.sharedSession(operation).then((session) => fn(session).catch((err: unknown) => this.sharedFailed(operation, fn, session, err)));
  }

  /** A call on the shared session failed: sent once more on a new session if the upstream forgot this one. */
  private async sharedFailed<T>(operation: string | undefined, fn: (session: UpstreamSession) => Promise<T>, session: UpstreamSession, err: unknown): Promise<T> {
    if (err instanceof SessionGoneError) {
      this.forgetShared(session);
      try {
        return await fn(await this.sharedSession(operation));
      } catch (again) {
        err = again;
      }
    }
    if (err instanceof UnavailableError) this.unreachable(operation, err);
    throw err;
  }

  private sharedSession(operation: string | undefined): Promise<UpstreamSession> {
    if (this.closed) return Promise.reject(new UnavailableError('upstream pool (closed)'));
    if (!this.shared) {
      const opening = this.open({ capabilities: {}, stream: false });
      this.shared = opening;
      opening.then((session) => {
        if (this.shared === opening) this.sharedOpen = session;
      }, (err: unknown) => {
        if (this.shared === opening) this.shared = undefined;
        this.unreachable(operation, err);
      });
    }
    return this.shared;
  }

  private forgetShared(session: UpstreamSession): void {
    if (this.sharedOpen === session) {
      this.shared = undefined;
      this.sharedOpen = undefined;
    }
    this.all.delete(session);
    void session.close(false);
  }

  /** Runs `fn` on a held session of its own, which answers the upstream's input requests for this call only. */
  private async onHeld<T>(operation: string, fn: (session: UpstreamSession) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let session: UpstreamSession;
      try {
        session = this.idle.pop() ?? (await this.openHeld());
      } catch (err) {
        this.unreachable(operation, err);
        throw err;
      }
      let healthy = true;
      try {
        return await fn(session);
      } catch (err) {
        healthy = err instanceof UpstreamRpcError || (err instanceof Error && err.name === 'AbortError');
        if (err instanceof SessionGoneError && attempt === 0) continue;
        if (err instanceof UnavailableError) this.unreachable(operation, err);
        throw err;
      } finally {
        session.input = undefined;
        this.release(session, healthy);
      }
    }
  }

  private release(session: UpstreamSession, healthy: boolean): void {
    if (healthy && !this.closed && this.idle.length < (this.options.maxIdle ?? DEFAULT_MAX_IDLE)) {
      this.idle.push(session);
      return;
    }
    this.all.delete(session);
    void session.close(healthy);
  }

  /** A new held session, opened in turn with at most `maxConnecting` others. */
  private async openHeld(): Promise<UpstreamSession> {
    if (this.connecting >= (this.options.maxConnecting ?? DEFAULT_MAX_CONNECTING)) {
      await new Promise<void>((resolve) => this.connectQueue.push(resolve));
      // A session released while this caller waited serves it without opening another.
      const idle = this.idle.pop();
      if (idle) {
        this.nextConnect();
        return idle;
      }
    }
    this.connecting++;
    try {
      return await this.open({ capabilities: INPUT_CAPABILITIES, stream: true });
    } finally {
      this.connecting--;
      this.nextConnect();
    }
  }

  private nextConnect(): void {
    this.connectQueue.shift()?.();
  }

  private async open(options: Pick<SessionOptions, 'capabilities' | 'stream'>): Promise<UpstreamSession> {
    if (this.closed) throw new UnavailableError('upstream pool (closed)');
    const session = await UpstreamSession.openRetrying(this.rpc, { ...options, clientInfo: this.options.clientInfo }, () => this.closed);
    if (this.closed) {
      void session.close(true);
      throw new UnavailableError('upstream pool (closed)');
    }
    this.all.add(session);
    return session;
  }

  private unreachable(operation: string | undefined, err: unknown): void {
    // A call the client or the task's cancel aborted did reach the upstream.
    if (operation === undefined || this.closed || !(err instanceof UnavailableError)) return;
    try {
      this.options.onUnreachable?.(operation, err);
    } catch {
      // The log never fails a call.
    }
  }
}
