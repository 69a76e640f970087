import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
const HOP_BY_HOP_SET: ReadonlySet<string> = new Set(HOP_BY_HOP);
/** The client's credentials are for the shim; the upstream gets the shim's own, never the client's. */
const CLIENT_ONLY = ['authorization', 'cookie', 'host', 'content-length', 'mcp-session-id'];
/** The shim has read the body, so a client's `Expect: 100-continue` was answered by the shim's server. */
const BODY_READ = ['expect'];

/** The client's and upstream's session ids of a forwarded request. */
export interface ForwardRoute {
  clientSessionId?: string;
  upstreamSessionId?: string;
}

/** Told the client's HTTP status once the forwarded request's response closed (traffic recording). */
export interface ForwardObserver {
  forwarded(status: number): void;
}

/**
 * Legacy requests the shim does not answer itself go to the upstream unchanged: only the session
 * id is swapped (client's ↔ upstream's) and the credentials are the shim's. The body was read
 * already (to classify the message), so it is written in one piece; the answer, JSON or an SSE
 * stream, is relayed chunk by chunk as it arrives.
 *
 * Every request pays for this hop, so it goes by undici's pool rather than node:http's client:
 * `ClientRequest` and its agent cost about 10 µs more CPU per request, a tenth of passthrough
 * throughput on two cores (docs/decisions/0010-passthrough-undici.md). Headers go both ways as flat
 * lists built from the raw ones, and the request options are fixed at start.
 */
export class Passthrough {
  private readonly pool: Pool;
  private readonly path: string;
  /** `Host` (and `Authorization` for a URL with credentials) as a client would derive them from the URL. */
  private readonly fromUrl: readonly string[];
  /** The shim's own credentials at the upstream, as a flat header list. */
  private readonly credentials: readonly string[];
  /** Client headers never forwarded: hop-by-hop, the client's own, and those the credentials replace. */
  private readonly dropped: ReadonlySet<string>;

  constructor(
    upstreamUrl: string,
    /** The shim's own credentials at the upstream (lower-case names, so they replace the client's). */
    upstreamHeaders: Readonly<Record<string, string>> = {},
    /** Hears a forward the upstream did not answer (for the log); the client gets a 502. */
    private readonly onUnreachable?: (operation: string, err: Error) => void,
  ) {
    const target = new URL(upstreamUrl);
    // No timeouts of undici's own: a forwarded tool call or SSE answer may take as long as the
    // upstream needs, as it could straight to the upstream; a client that leaves aborts it.
    this.pool = new Pool(target.origin, { connections: 256, headersTimeout: 0, bodyTimeout: 0 });
    this.path = `${target.pathname}${target.search}`;
    this.credentials = Object.entries(upstreamHeaders).flat();
    const fromUrl = ['host', target.host];
    if ((target.username || target.password) && !Object.keys(upstreamHeaders).some((name) => name.toLowerCase() === 'authorization')) {
      const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      fromUrl.push('authorization', `Basic ${Buffer.from(auth).toString('base64')}`);
    }
    this.fromUrl = fromUrl;
    this.dropped = new Set([...HOP_BY_HOP, ...CLIENT_ONLY, ...BODY_READ, ...Object.keys(upstreamHeaders).map((name) => name.toLowerCase())]);
  }

  /**
   * Forwards `req` (whose body, if already read, is `body`) within the client's upstream session;
   * `observer` hears the client's status once the response closed.
   */
  forward(req: IncomingMessage, res: ServerResponse, session: ForwardRoute, body?: Buffer, observer?: ForwardObserver): void {
    const headers = forwardedHeaders(req.rawHeaders, this.dropped);
    for (const item of this.credentials) headers.push(item);
    if (session.upstreamSessionId) headers.push('mcp-session-id', session.upstreamSessionId);
    for (const item of this.fromUrl) headers.push(item);
    const relay = new Relay(res, session.clientSessionId, this.onUnreachable);
    res.once('close', () => {
      relay.clientGone();
      observer?.forwarded(res.statusCode);
    });
    this.pool.dispatch({ path: this.path, method: req.method as Dispatcher.HttpMethod, headers, body: body ?? req }, relay);
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/**
 * The upstream's answer to the client: status and headers (with the client's session id for the
 * upstream's), then each chunk as it arrives, so that an SSE answer is flushed event by event. A
 * slow client pauses the upstream until its socket drains; a client that goes away stops the
 * upstream request (and the upstream sees the cancel).
 */
class Relay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private gone = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly clientSessionId: string | undefined,
    private readonly onUnreachable?: (operation: string, err: Error) => void,
  ) {}

  /** Stops the upstream request now, or as soon as undici starts it. */
  clientGone(): void {
    if (this.res.writableFinished) return;
    this.gone = true;
    if (this.controller) stop(this.controller);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) stop(controller);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, parsed: IncomingHttpHeaders): void {
    const res = this.res;
    const raw = controller.rawHeaders;
    // Headers set already (the cutover's deprecation headers) are merged by name, which would keep
    // only the last of a repeated upstream header: those answers go by the merged object.
    if (Array.isArray(raw) && res.getHeaderNames().length === 0) res.writeHead(statusCode, answerHeaders(raw, this.clientSessionId));
    else res.writeHead(statusCode, mergedAnswerHeaders(parsed, this.clientSessionId));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.write(chunk)) return;
    controller.pause();
    this.res.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const res = this.res;
    if (this.gone) return;
    this.onUnreachable?.('forward', err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `Upstream unreachable: ${err.message}` } }));
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

/** Header bytes as node:http reads and writes them. */
function latin1(item: Buffer | string): string {
  return typeof item === 'string' ? item : item.toString('latin1');
}

function mergedAnswerHeaders(parsed: IncomingHttpHeaders, clientSessionId: string | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in parsed) {
    const value = parsed[name];
    if (value !== undefined && !HOP_BY_HOP_SET.has(name)) out[name] = value;
  }
  if (clientSessionId && out['mcp-session-id'] !== undefined) out['mcp-session-id'] = clientSessionId;
  return out;
}
