import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** The client's credentials are for the shim; the upstream gets the shim's own, never the client's. */
const CLIENT_ONLY = new Set(['authorization', 'cookie', 'host', 'content-length', 'mcp-session-id']);

/**
 * Legacy requests the shim does not answer itself go to the upstream unchanged: only the session
 * id is swapped (client's ↔ upstream's) and the credentials are the shim's. The body was read
 * already (to classify the message), so it is written in one piece; the answer, JSON or an SSE
 * stream, is piped back as it arrives. A plain node:http request on a keep-alive agent: measured
 * against http-proxy in docs/benchmarks.md (Passthrough).
 */
export class Passthrough {
  private readonly target: URL;
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;

  constructor(
    upstreamUrl: string,
    /** The shim's own credentials at the upstream (lower-case names, so they replace the client's). */
    private readonly upstreamHeaders: Readonly<Record<string, string>> = {},
  ) {
    this.target = new URL(upstreamUrl);
    const https = this.target.protocol === 'https:';
    this.agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: 256 }) : new HttpAgent({ keepAlive: true, maxSockets: 256 });
    this.send = https ? (httpsRequest as typeof httpRequest) : httpRequest;
  }

  /** Forwards `req` (whose body, if already read, is `body`) within the client's upstream session. */
  forward(req: IncomingMessage, res: ServerResponse, session: { clientSessionId?: string; upstreamSessionId?: string }, body?: Buffer): void {
    const headers = withoutHeaders(req.headers, CLIENT_ONLY);
    Object.assign(headers, this.upstreamHeaders);
    if (session.upstreamSessionId) headers['mcp-session-id'] = session.upstreamSessionId;
    if (body) headers['content-length'] = body.length;
    const outgoing = this.send(
      this.target,
      { method: req.method, headers, agent: this.agent },
      (upstream) => {
        const answer = withoutHeaders(upstream.headers);
        if (session.clientSessionId && upstream.headers['mcp-session-id'] !== undefined) answer['mcp-session-id'] = session.clientSessionId;
        res.writeHead(upstream.statusCode ?? 502, answer);
        // An SSE answer is flushed event by event; piping does that as the chunks arrive.
        upstream.pipe(res);
        upstream.on('error', () => res.destroy());
      },
    );
    // A client that goes away stops the upstream request (and the upstream sees the cancel).
    res.once('close', () => {
      if (!res.writableFinished) outgoing.destroy();
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

function withoutHeaders(incoming: IncomingHttpHeaders, also?: ReadonlySet<string>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || also?.has(name)) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
