import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { parseSseBody, safeJson, sseMessages } from './sse-messages.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
const HOP_BY_HOP_SET: ReadonlySet<string> = new Set(HOP_BY_HOP);
/** The client's credentials are for the shim; the upstream gets the shim's own, never the client's. */
const CLIENT_ONLY = ['authorization', 'cookie', 'host', 'content-length', 'mcp-session-id'];
/** The shim has read the body, so a client's `Expect: 100-continue` was answered by the shim's server. */
const BODY_READ = ['expect'];

/** A client's request that the upstream answers, within the upstream session the client's maps to. */
export interface ForwardRequest {
  method: string;
  /** The client's headers as received: a flat list (name, value, …), repeats kept. */
  rawHeaders: readonly string[];
  body: Buffer | undefined;
  upstreamSessionId: string | undefined;
  /** Names the client's session in the answer, in place of the upstream's. */
  clientSessionId: string | undefined;
}

/**
 * Where the upstream's answer to a forwarded request goes (the HTTP edge writes it to the client).
 * Called in order: `head`, `data`…, then `end`; or `fail` at any point.
 */
export interface AnswerSink {
  /** The sender, told when the client goes away (it stops the upstream request). */
  bind(sender: { clientGone(): void }): void;
  /** Status and headers: a flat list (name, value, …) without hop-by-hop ones, repeats and order kept. */
  head(status: number, headers: string[]): void;
  /** One chunk as it arrived; false when the client is behind, and the sender waits for `onDrain`. */
  data(chunk: Buffer): boolean;
  onDrain(resume: () => void): void;
  end(): void;
  /** The upstream did not answer, or broke off. */
  fail(err: Error): void;
}

/** The upstream's answer to a request of the shim's own. */
export interface UpstreamAnswer {
  status: number;
  sessionId?: string;
  /** The JSON-RPC response to our request, from a JSON or an SSE body. */
  response?: Record<string, unknown>;
}

export interface UpstreamHttpOptions {
  upstreamUrl: string;
  /** The shim's own credentials at the upstream, on every request. */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** Hears a forward the upstream did not answer (for the log); the client gets its error anyway. */
  onUnreachable?: (operation: string, err: Error) => void;
}

/**
 * The gateway's one HTTP client for the legacy sessions' traffic: forwarded requests
 * (passthrough), the shim's own requests in a client's upstream session (`initialize`,
 * `tools/list`), the upstream's GET stream and `DELETE`. Every request carries the shim's
 * credentials, never a client's.
 *
 * Every forwarded request pays for this hop, so it goes by undici's pool rather than node:http's
 * client (docs/decisions/0010-passthrough-undici.md); headers go both ways as flat lists built
 * from the raw ones, and the request options are fixed at start. The upstream's standalone GET
 * streams, one per client stream and open for as long as it is, use a pool of their own, so that
 * they never hold the connections forwarded requests wait for.
 */
export class UpstreamHttp {
  private readonly exchanges: Pool;
  private readonly streams: Pool;
  private readonly path: string;
  /** `Host` (and `Authorization` for a URL with credentials) as a client would derive them from the URL. */
  private readonly fromUrl: readonly string[];
  /** The shim's own credentials at the upstream, as a flat header list and as an object. */
  private readonly credentials: readonly string[];
  private readonly credentialHeaders: Readonly<Record<string, string>>;
  /** Client headers never forwarded: hop-by-hop, the client's own, and those the credentials replace. */
  private readonly dropped: ReadonlySet<string>;
  private readonly onUnreachable: ((operation: string, err: Error) => void) | undefined;

  constructor(options: UpstreamHttpOptions) {
    const upstreamHeaders = options.upstreamHeaders ?? {};
    const target = new URL(options.upstreamUrl);
    // No timeouts of undici's own: a forwarded tool call or SSE answer may take as long as the
    // upstream needs, as it could straight to the upstream; a client that leaves aborts it.
    this.exchanges = new Pool(target.origin, { connections: 256, headersTimeout: 0, bodyTimeout: 0 });
    this.streams = new Pool(target.origin, { headersTimeout: 0, bodyTimeout: 0 });
    this.path = `${target.pathname}${target.search}`;
    this.credentials = Object.entries(upstreamHeaders).flat();
    const fromUrl = ['host', target.host];
    if ((target.username || target.password) && !Object.keys(upstreamHeaders).some((name) => name.toLowerCase() === 'authorization')) {
      const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      fromUrl.push('authorization', `Basic ${Buffer.from(auth).toString('base64')}`);
    }
    this.fromUrl = fromUrl;
    this.credentialHeaders = Object.fromEntries(headerPairs([...fromUrl, ...this.credentials]));
    this.dropped = new Set([...HOP_BY_HOP, ...CLIENT_ONLY, ...BODY_READ, ...Object.keys(upstreamHeaders).map((name) => name.toLowerCase())]);
    this.onUnreachable = options.onUnreachable;
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
   * One JSON-RPC request of the shim's own in a client's upstream session, for the few whose
   * answer the shim rewrites (`initialize`, `tools/list`). Throws when the upstream is unreachable.
   */
  async post(message: Record<string, unknown>, headers: Record<string, string>): Promise<UpstreamAnswer> {
    const answer = await this.exchanges.request({
      path: this.path,
      method: 'POST',
      headers: { ...this.credentialHeaders, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(message),
    });
    const text = await answer.body.text();
    const type = single(answer.headers['content-type']) ?? '';
    const id = message.id;
    let response: Record<string, unknown> | undefined;
    if (type.includes('text/event-stream')) {
      for (const parsed of parseSseBody(text)) {
        const candidate = parsed as Record<string, unknown>;
        if (typeof candidate === 'object' && candidate !== null && candidate.id === id && ('result' in candidate || 'error' in candidate)) response = candidate;
      }
    } else if (text) {
      response = safeJson(text) as Record<string, unknown> | undefined;
    }
    return { status: answer.statusCode, sessionId: single(answer.headers['mcp-session-id']), response };
  }

  /**
   * The upstream's standalone GET stream of a session: each JSON-RPC message it sends goes to
   * `onMessage`, the next one read only once that one is handled (a slow client slows the
   * upstream, not the shim's memory). An upstream that offers no GET stream (405) is fine: nothing
   * comes. Returns its stop.
   */
  openStream(upstreamSessionId: string, onMessage: (message: Record<string, unknown>) => Promise<void>): () => void {
    const abort = new AbortController();
    void (async () => {
      const answer = await this.streams.request({
        path: this.path,
        method: 'GET',
        headers: { ...this.credentialHeaders, accept: 'text/event-stream', 'mcp-session-id': upstreamSessionId },
        signal: abort.signal,
      });
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        await answer.body.dump();
        return;
      }
      const due: Record<string, unknown>[] = [];
      const parser = sseMessages((data) => {
        const parsed = safeJson(data);
        // Not JSON: nothing a client could use.
        if (typeof parsed === 'object' && parsed !== null) due.push(parsed as Record<string, unknown>);
      });
      answer.body.setEncoding('utf8');
      for await (const chunk of answer.body) {
        parser.feed(chunk as string);
        while (due.length > 0) await onMessage(due.shift() as Record<string, unknown>);
      }
    })().catch(() => undefined);
    return () => abort.abort();
  }

  /**
   * Ends an upstream session (a client's DELETE, or the shim's session lapsed). The upstream may
   * have dropped it already; nothing depends on the answer.
   */
  async deleteSession(upstreamSessionId: string): Promise<void> {
    const answer = await this.exchanges.request({
      path: this.path,
      method: 'DELETE',
      headers: { ...this.credentialHeaders, 'mcp-session-id': upstreamSessionId },
    });
    await answer.body.dump();
  }

  async close(): Promise<void> {
    await Promise.all([this.exchanges.destroy(), this.streams.destroy()]);
  }
}

/**
 * The upstream's answer to a forwarded request, handed to the sink as it arrives. A slow client
 * pauses the upstream until it has read; a client that goes away stops the upstream request (and
 * the upstream sees the cancel).
 */
class Forwarding implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private gone = false;
  private finished = false;

  constructor(
    private readonly sink: AnswerSink,
    private readonly clientSessionId: string | undefined,
    private readonly onUnreachable: ((operation: string, err: Error) => void) | undefined,
  ) {
    sink.bind(this);
  }

  /** Stops the upstream request now, or as soon as undici starts it. */
  clientGone(): void {
    if (this.finished) return;
    this.gone = true;
    if (this.controller) stop(this.controller);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) stop(controller);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, parsed: IncomingHttpHeaders): void {
    const raw = controller.rawHeaders;
    this.sink.head(statusCode, Array.isArray(raw) ? answerHeaders(raw, this.clientSessionId) : parsedAnswerHeaders(parsed, this.clientSessionId));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink.data(chunk)) return;
    controller.pause();
    this.sink.onDrain(() => controller.resume());
  }

  onResponseEnd(): void {
    this.finished = true;
    this.sink.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.finished = true;
    if (this.gone) return;
    this.onUnreachable?.('forward', err);
    this.sink.fail(err);
  }
}

function stop(controller: Dispatcher.DispatchController): void {
  controller.abort(new Error('the client went away'));
}

/** The client's headers as a flat list (lower-case names, repeats kept), without `dropped`. */
function forwardedHeaders(raw: readonly string[], dropped: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (!dropped.has(name)) out.push(name, raw[i + 1] as string);
  }
  return out;
}

/**
 * The upstream's headers as a flat list without hop-by-hop ones, naming the client's session: the
 * raw list keeps repeats and their order.
 */
function answerHeaders(raw: ReadonlyArray<Buffer | string>, clientSessionId: string | undefined): string[] {
  const out: string[] = [];
  let named = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = latin1(raw[i]!).toLowerCase();
    if (HOP_BY_HOP_SET.has(name)) continue;
    if (name === 'mcp-session-id' && clientSessionId) {
      if (!named) out.push(name, clientSessionId);
      named = true;
      continue;
    }
    out.push(name, latin1(raw[i + 1]!));
  }
  return out;
}

/** The same from undici's parsed headers, when it gives no raw list. */
function parsedAnswerHeaders(parsed: IncomingHttpHeaders, clientSessionId: string | undefined): string[] {
  const out: string[] = [];
  for (const name in parsed) {
    const value = parsed[name];
    if (value === undefined || HOP_BY_HOP_SET.has(name)) continue;
    if (name === 'mcp-session-id' && clientSessionId) out.push(name, clientSessionId);
    else for (const item of Array.isArray(value) ? value : [value]) out.push(name, item);
  }
  return out;
}

/** Header bytes as node:http reads and writes them. */
function latin1(item: Buffer | string): string {
  return typeof item === 'string' ? item : item.toString('latin1');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function headerPairs(flat: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
  return out;
}
