import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
const HOP_BY_HOP_SET: ReadonlySet<string> = new Set(HOP_BY_HOP);
/** The client's credentials are for the shim; the upstream gets the shim's own, never the client's. */
const CLIENT_ONLY = ['authorization', 'cookie', 'host', 'content-length', 'mcp-session-id'];

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
 * stream, is relayed chunk by chunk as it arrives. A plain node:http request on a keep-alive agent:
 * measured against a pipe proxy in docs/benchmarks.md (Passthrough).
 *
 * Every request pays for this hop, so it does the least node:http allows: headers go both ways as
 * flat lists built from the raw ones (no header objects, no per-header `setHeader`), the request
 * options are fixed at start (no URL to convert per request), and the answer is relayed by hand
 * instead of `pipe` (whose listeners on both streams cost more than the relay itself).
 */
export class Passthrough {
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;
  private readonly protocol: string;
  private readonly hostname: string;
  private readonly port: string;
  private readonly path: string;
  /** `Host` (and `Authorization` for a URL with credentials) as node:http derives them from the URL: it adds none to a flat list. */
  private readonly fromUrl: readonly string[];
  /** The shim's own credentials at the upstream, as a flat header list. */
  private readonly credentials: readonly string[];
  /** Client headers never forwarded: hop-by-hop, the client's own, and those the credentials replace. */
  private readonly dropped: ReadonlySet<string>;

  constructor(
    upstreamUrl: string,
    /** The shim's own credentials at the upstream (lower-case names, so they replace the client's). */
    upstreamHeaders: Readonly<Record<string, string>> = {},
  ) {
    const target = new URL(upstreamUrl);
    const https = target.protocol === 'https:';
    this.agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: 256 }) : new HttpAgent({ keepAlive: true, maxSockets: 256 });
    this.send = https ? (httpsRequest as typeof httpRequest) : httpRequest;
    this.protocol = target.protocol;
    // node:http wants an IPv6 literal without its brackets.
    this.hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    this.port = target.port;
    this.path = `${target.pathname}${target.search}`;
    this.credentials = Object.entries(upstreamHeaders).flat();
    const fromUrl = ['Host', target.host];
    if ((target.username || target.password) && !Object.keys(upstreamHeaders).some((name) => name.toLowerCase() === 'authorization')) {
      const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      fromUrl.push('Authorization', `Basic ${Buffer.from(auth).toString('base64')}`);
    }
    this.fromUrl = fromUrl;
    this.dropped = new Set([...HOP_BY_HOP, ...CLIENT_ONLY, ...Object.keys(upstreamHeaders).map((name) => name.toLowerCase())]);
  }

  /**
   * Forwards `req` (whose body, if already read, is `body`) within the client's upstream session;
   * `observer` hears the client's status once the response closed.
   */
  forward(req: IncomingMessage, res: ServerResponse, session: ForwardRoute, body?: Buffer, observer?: ForwardObserver): void {
    const headers = forwardedHeaders(req.rawHeaders, this.dropped);
    for (const item of this.credentials) headers.push(item);
    if (session.upstreamSessionId) headers.push('mcp-session-id', session.upstreamSessionId);
    if (body) headers.push('content-length', String(body.length));
    for (const item of this.fromUrl) headers.push(item);
    const options: RequestOptions = {
      protocol: this.protocol,
      hostname: this.hostname,
      port: this.port,
      path: this.path,
      method: req.method,
      headers,
      agent: this.agent,
    };
    const outgoing = this.send(options, (upstream) => relay(upstream, res, session.clientSessionId));
    // A client that goes away stops the upstream request (and the upstream sees the cancel).
    res.once('close', () => {
      if (!res.writableFinished) outgoing.destroy();
      observer?.forwarded(res.statusCode);
    });
    outgoing.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `Upstream unreachable: ${err.message}` } }));
    });
    if (body) outgoing.end(body);
    else req.pipe(outgoing);
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * The upstream's answer to the client: status and headers (with the client's session id for the
 * upstream's), then each chunk as it arrives, so that an SSE answer is flushed event by event. A
 * slow client pauses the upstream until its socket drains.
 */
function relay(upstream: IncomingMessage, res: ServerResponse, clientSessionId: string | undefined): void {
  const headers = answerHeaders(upstream.rawHeaders, clientSessionId);
  // Headers set already (the cutover's deprecation headers) are merged by name, which would keep
  // only the last of a repeated upstream header: those answers go by node:http's merged object.
  if (res.getHeaderNames().length === 0) res.writeHead(upstream.statusCode ?? 502, headers);
  else res.writeHead(upstream.statusCode ?? 502, mergedAnswerHeaders(upstream, clientSessionId));
  const resume = (): void => {
    upstream.resume();
  };
  upstream.on('data', (chunk: Buffer) => {
    if (!res.write(chunk)) {
      upstream.pause();
      res.once('drain', resume);
    }
  });
  upstream.on('end', () => res.end());
  upstream.on('error', () => res.destroy());
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

/** The upstream's headers as a flat list without hop-by-hop ones, naming the client's session. */
function answerHeaders(raw: readonly string[], clientSessionId: string | undefined): string[] {
  const out: string[] = [];
  let named = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (HOP_BY_HOP_SET.has(name)) continue;
    if (name === 'mcp-session-id' && clientSessionId) {
      if (!named) out.push(name, clientSessionId);
      named = true;
      continue;
    }
    out.push(name, raw[i + 1] as string);
  }
  return out;
}

function mergedAnswerHeaders(upstream: IncomingMessage, clientSessionId: string | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in upstream.headers) {
    const value = upstream.headers[name];
    if (value !== undefined && !HOP_BY_HOP_SET.has(name)) out[name] = value;
  }
  if (clientSessionId && out['mcp-session-id'] !== undefined) out['mcp-session-id'] = clientSessionId;
  return out;
}
