import { Pool, type Dispatcher } from 'undici';
import { UnavailableError } from '../../core/errors.js';
import { AnswerReader, type JsonRpcMessage } from './answer-reader.js';
import { Forwarding, forwardedHeaders, HOP_BY_HOP, type AnswerSink, type ForwardRequest } from './forwarding.js';
import { safeJson, sseMessages } from './sse-messages.js';

export type { AnswerSink, ForwardRequest } from './forwarding.js';

/** The client's credentials are for the shim; the upstream gets the shim's own, never the client's. */
const CLIENT_ONLY = ['authorization', 'cookie', 'host', 'content-length', 'mcp-session-id'];
/** The shim has read the body, so a client's `Expect: 100-continue` was answered by the shim's server. */
const BODY_READ = ['expect'];

/** Every upstream answer the shim reads (not a forwarded one, which streams to its client) is at most this large. */
export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Connections to the upstream for requests (GET streams have their own). */
export const DEFAULT_UPSTREAM_CONNECTIONS = 1024;

const MERGED = Symbol('merged request headers');

/** Request headers made by `UpstreamRpc.headers`, so that no request is sent without the credentials. */
export interface RequestHeaders {
  readonly [MERGED]: Readonly<Record<string, string>>;
}

/** The upstream's answer to a request of the shim's own in a client's session (`initialize`, `tools/list`). */
export interface UpstreamAnswer {
  status: number;
  sessionId?: string;
  /** The JSON-RPC response to our request, from a JSON or an SSE body. */
  response?: Record<string, unknown>;
}

export interface UpstreamRpcOptions {
  url: string;
  /** The shim's own credentials at the upstream, on every request. */
  headers?: Readonly<Record<string, string>>;
  /** Connections for requests at once; a request past them waits for one. */
  connections?: number;
  /** The bound on every answer the shim reads itself. */
  maxAnswerBytes?: number;
  /** Hears a request the upstream did not answer (for the log); the caller gets its error anyway. */
  onUnreachable?: (operation: string, err: Error) => void;
}

/**
 * The shim's one HTTP client of the upstream (docs/decisions/0010-passthrough-undici.md, 0032):
 * every request goes by undici's pools with the shim's credentials, never a client's. It frames
 * nothing itself: `send` POSTs one JSON-RPC request and reads its answer (JSON, or SSE parsed as it
 * arrives) without web streams; `deliver` POSTs a notification or a response; `forward` relays a
 * client's request byte for byte; `openStream` follows a session's GET stream. Sessions and the
 * 2026-07-28 framing sit above it (session.ts, sep2663-client.ts).
 *
 * The upstream's standalone GET streams, open as long as their sessions, use a pool of their own,
 * so that they never hold the connections requests wait for.
 */
export class UpstreamRpc {
  private readonly exchanges: Pool;
  private readonly streams: Pool;
  private readonly path: string;
  /** `Host` (and `Authorization` for a URL with credentials) as a client would derive them from the URL. */
  private readonly fromUrl: readonly string[];
  /** The shim's own credentials at the upstream, as a flat header list. */
  private readonly credentials: readonly string[];
  /** What every request of the shim's own carries, lower-case names; a request's own headers override it. */
  private readonly base: Readonly<Record<string, string>>;
  /** Client headers never forwarded: hop-by-hop, the client's own, and those the credentials replace. */
  private readonly dropped: ReadonlySet<string>;
  readonly maxAnswerBytes: number;
  private readonly onUnreachable: ((operation: string, err: Error) => void) | undefined;
  private closed = false;

  constructor(options: UpstreamRpcOptions) {
    const upstreamHeaders = options.headers ?? {};
    const target = new URL(options.url);
    // No timeouts of undici's own: a tool call or SSE answer may take as long as the upstream
    // needs; every caller bounds its own wait.
    this.exchanges = new Pool(target.origin, { connections: options.connections ?? DEFAULT_UPSTREAM_CONNECTIONS, headersTimeout: 0, bodyTimeout: 0 });
    this.streams = new Pool(target.origin, { headersTimeout: 0, bodyTimeout: 0 });
    this.path = `${target.pathname}${target.search}`;
    this.credentials = Object.entries(upstreamHeaders).flat();
    const fromUrl = ['host', target.host];
    if ((target.username || target.password) && !Object.keys(upstreamHeaders).some((name) => name.toLowerCase() === 'authorization')) {
      const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      fromUrl.push('authorization', `Basic ${Buffer.from(auth).toString('base64')}`);
    }
    this.fromUrl = fromUrl;
    const base: Record<string, string> = {};
    for (const [name, value] of headerPairs([...fromUrl, ...this.credentials])) base[name.toLowerCase()] = value;
    base['content-type'] = 'application/json';
    base.accept = 'application/json, text/event-stream';
    this.base = base;
    this.dropped = new Set([...HOP_BY_HOP, ...CLIENT_ONLY, ...BODY_READ, ...Object.keys(upstreamHeaders).map((name) => name.toLowerCase())]);
    this.maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    this.onUnreachable = options.onUnreachable;
  }

  /**
   * POSTs one JSON-RPC request (`body`, whose id is `id`) with the wire headers of its caller
   * (lower-case names: session id, protocol version, `Mcp-Method` …). The reader's `answer`
   * resolves at the response; messages the upstream sends before it on an event stream go to
   * `onMessage`. Abort with `reader.abort(err)`.
   */
  send(body: string, id: string | number, headers: RequestHeaders, onMessage?: (message: JsonRpcMessage) => void): AnswerReader {
    const reader = new AnswerReader(id, this.maxAnswerBytes, onMessage);
    if (this.closed) {
      reader.abort(new UnavailableError('upstream (the client is closed)'));
      return reader;
    }
    this.exchanges.dispatch({ path: this.path, method: 'POST', headers: headers[MERGED], body }, reader);
    return reader;
  }

  /**
   * The headers of a request of the shim's own: the credentials and content negotiation, then its
   * caller's wire headers (lower-case names). Merged once: a session sends the same ones every time.
   */
  headers(wire: Readonly<Record<string, string>>): RequestHeaders {
    return { [MERGED]: { ...this.base, ...wire } };
  }

  /** POSTs a notification or a response (no answer but its status); resolves with the status. */
  async deliver(message: JsonRpcMessage, headers: RequestHeaders, signal?: AbortSignal): Promise<number> {
    const answer = await this.exchanges.request({ path: this.path, method: 'POST', headers: headers[MERGED], body: JSON.stringify(message), signal });
    await answer.body.dump();
    return answer.statusCode;
  }

  /**
   * One JSON-RPC request of the shim's own in a client's upstream session, for the few whose
   * answer the shim rewrites (`initialize`, `tools/list`). Throws when the upstream is unreachable.
   */
  async post(message: Record<string, unknown>, headers: Record<string, string>): Promise<UpstreamAnswer> {
    const id = message.id as string | number;
    const lower: Record<string, string> = {};
    for (const name in headers) lower[name.toLowerCase()] = headers[name]!;
    const answer = await this.send(JSON.stringify(message), id, this.headers(lower)).answer;
    return { status: answer.status, sessionId: single(answer.headers['mcp-session-id']), response: answer.response };
  }

  /**
   * Forwards a client's request unchanged but for the session id and the credentials; the answer,
   * JSON or an SSE stream, goes to `sink` chunk by chunk as it arrives.
   */
  forward(request: ForwardRequest, sink: AnswerSink): void {
    const headers = forwardedHeaders(request.rawHeaders, this.dropped);
    for (const item of this.credentials) headers.push(item);
    if (request.upstreamSessionId) headers.push('mcp-session-id', request.upstreamSessionId);
    for (const item of this.fromUrl) headers.push(item);
    const handler = new Forwarding(sink, request.clientSessionId, this.onUnreachable);
    this.exchanges.dispatch({ path: this.path, method: request.method as Dispatcher.HttpMethod, headers, body: request.body }, handler);
  }

  /**
   * A session's standalone GET stream: each JSON-RPC message it sends goes to `onMessage`, the
   * next one read only once that one is handled (a slow client slows the upstream, not the shim's
   * memory). An upstream that offers no GET stream (405) is fine: nothing comes. A stream that
   * breaks is told to `onError` (for the log). Returns its stop.
   */
  openStream(
    upstreamSessionId: string,
    onMessage: (message: Record<string, unknown>) => Promise<void> | void,
    options: { protocolVersion?: string; onError?: (err: Error) => void } = {},
  ): () => void {
    const abort = new AbortController();
    const headers: Record<string, string> = { ...this.base, accept: 'text/event-stream', 'mcp-session-id': upstreamSessionId };
    delete headers['content-type'];
    if (options.protocolVersion) headers['mcp-protocol-version'] = options.protocolVersion;
    void (async () => {
      const answer = await this.streams.request({ path: this.path, method: 'GET', headers, signal: abort.signal });
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        await answer.body.dump();
        return;
      }
      const due: Record<string, unknown>[] = [];
      const parser = sseMessages((data) => {
        const parsed = safeJson(data);
        // Not JSON: nothing a client could use.
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) due.push(parsed as Record<string, unknown>);
      });
      const decoder = new TextDecoder();
      for await (const chunk of answer.body) {
        parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
        while (due.length > 0) await onMessage(due.shift() as Record<string, unknown>);
      }
    })().catch((err: unknown) => {
      if (!abort.signal.aborted && !this.closed) options.onError?.(err instanceof Error ? err : new Error(String(err)));
    });
    return () => abort.abort();
  }

  /**
   * Ends an upstream session (a client's DELETE, the shim's session lapsed, a task session done).
   * The upstream may have dropped it already; nothing depends on the answer.
   */
  async deleteSession(upstreamSessionId: string, protocolVersion?: string): Promise<void> {
    const headers: Record<string, string> = { ...this.base, 'mcp-session-id': upstreamSessionId };
    delete headers['content-type'];
    if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
    const answer = await this.exchanges.request({ path: this.path, method: 'DELETE', headers });
    await answer.body.dump();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.exchanges.destroy(), this.streams.destroy()]);
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function headerPairs(flat: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
  return out;
}
