import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, { type Express } from 'express';

/** Idle keep-alive connections stay open this long (see createHttpServer). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface HealthChecks {
  /** Each named dependency answers true when reachable. */
  readiness: Record<string, () => Promise<boolean>>;
  /** True from SIGTERM on, the pre-stop delay included: /readyz answers 503 so that load balancers stop sending. */
  notReady?: () => boolean;
  /** True once the graceful stop has begun: each answer closes its connection. */
  draining?: () => boolean;
}

/** What a client may make the server hold (docs/security.md, "Bounds"). */
export interface ConnectionBounds {
  /** A request's headers must arrive within this long. */
  headersTimeoutMs: number;
  /** A whole request must arrive within this long; node stops counting once the request is read, so responses and streams are not bounded. */
  requestTimeoutMs: number;
  /** Open connections; more are closed at once. 0: no limit. */
  maxConnections: number;
}

/** How often node looks for connections past those timeouts: the precision of both bounds (node's default is 30 s). */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Express serves everything but the MCP endpoint: health now, dashboard and metrics later. The
 * MCP endpoint is dispatched before express so the hot path never pays for its stack.
 */
export function createHttpServer(
  mcpPath: string,
  handleMcp: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  health: HealthChecks,
  onError: (err: unknown) => void,
  bounds: ConnectionBounds,
): { server: Server; app: Express } {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (health.notReady?.() || health.draining?.()) {
      res.status(503).json({ status: 'shutting down', checks: {} });
      return;
    }
    const names = Object.keys(health.readiness);
    const results = await Promise.all(names.map((name) => (health.readiness[name] as () => Promise<boolean>)().catch(() => false)));
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i] ? 'ok' : 'unreachable']));
    res.status(results.every(Boolean) ? 200 : 503).json({ status: results.every(Boolean) ? 'ready' : 'not ready', checks });
  });

  const timeouts = { headersTimeout: bounds.headersTimeoutMs, requestTimeout: bounds.requestTimeoutMs, connectionsCheckingInterval: TIMEOUT_CHECK_MS };
  const server = createServer(timeouts, (req, res) => {
    // A request on a connection opened before the shutdown is still served, but its connection
    // closes after the answer, so that the client's next request reaches another replica.
    if (health.draining?.()) res.setHeader('connection', 'close');
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === mcpPath) {
      handleMcp(req, res).catch((err: unknown) => {
        onError(err);
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
        } else {
          res.destroy();
        }
      });
      return;
    }
    app(req, res);
  });
  // Idle keep-alive connections outlive a load balancer's (60 s on most): the side that closes an
  // idle connection first races a request sent on it, and the client sees a reset for a request
  // it may not safely send again. Node's 5 s default loses that race all the time. (The headers
  // timeout counts from a request's first byte, so an idle connection is not subject to it.)
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  if (bounds.maxConnections > 0) server.maxConnections = bounds.maxConnections;
  return { server, app };
}
