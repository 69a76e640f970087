import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import httpProxy from 'http-proxy';

interface Route {
  clientSessionId?: string;
}

/**
 * Legacy requests the shim does not answer itself go to the upstream unchanged through
 * http-proxy: only the session id is swapped (client's ↔ upstream's), bodies stream through.
 */
export class Passthrough {
  // Without an agent http-proxy opens a new upstream connection per request (measured: half the throughput).
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly proxy = httpProxy.createProxyServer({ ignorePath: true, proxyTimeout: 0, xfwd: false, agent: this.agent });
  private readonly routes = new WeakMap<IncomingMessage, Route>();

  constructor(
    private readonly upstreamUrl: string,
    /** The shim's own credentials at the upstream (lower-case names, so they replace the client's). */
    private readonly upstreamHeaders: Readonly<Record<string, string>> = {},
  ) {
    this.proxy.on('proxyRes', (proxyRes, req) => {
      const route = this.routes.get(req);
      if (route?.clientSessionId && proxyRes.headers['mcp-session-id'] !== undefined) {
        proxyRes.headers['mcp-session-id'] = route.clientSessionId;
      }
    });
    this.proxy.on('error', (err, _req, res) => {
      const response = res as ServerResponse;
      if ('headersSent' in response && !response.headersSent) {
        response.writeHead(502, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `Upstream unreachable: ${err.message}` } }));
      } else {
        response.destroy?.();
      }
    });
  }

  /** Forwards `req` (whose body, if already read, is `body`) within the client's upstream session. */
  forward(req: IncomingMessage, res: ServerResponse, session: { clientSessionId?: string; upstreamSessionId?: string }, body?: Buffer): void {
    this.routes.set(req, { clientSessionId: session.clientSessionId });
    const headers: Record<string, string> = { ...this.upstreamHeaders };
    if (session.upstreamSessionId) headers['mcp-session-id'] = session.upstreamSessionId;
    else delete req.headers['mcp-session-id'];
    // The client's credential is for the shim; the upstream gets the shim's own, never the client's.
    delete req.headers.authorization;
    delete req.headers.cookie;
    this.proxy.web(req, res, {
      target: this.upstreamUrl,
      changeOrigin: true,
      headers,
      buffer: body ? Readable.from([body]) : undefined,
    });
  }

  close(): void {
    this.proxy.close();
    this.agent.destroy();
  }
}
