import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BodyError, readJsonBody } from './http-body.js';

export interface SessionServerOptions {
  port?: number;
  host?: string;
  /** The MCP endpoint's path. */
  path: string;
  /** One McpServer per session, as the SDK's Streamable HTTP transport expects. */
  newServer: () => McpServer;
  /** Sees every POSTed body before it is handled (a demo that counts requests). */
  onBody?: (body: unknown) => void;
  /** Other routes: true when it answered the request. */
  extra?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
}

export interface SessionServer {
  url: string;
  close(): Promise<void>;
}

/** A 2025-11-25 Streamable HTTP MCP server with sessions, one McpServer each. */
export async function startSessionServer(opts: SessionServerOptions): Promise<SessionServer> {
  const host = opts.host ?? '127.0.0.1';
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await opts.newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (opts.extra?.(req, res, path)) return;
    if (path !== opts.path) return sendError(res, 404, -32600, 'Not found');
    const sessionId = req.headers['mcp-session-id'];
    const transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method === 'POST') {
      const body = await readJsonBody(req);
      opts.onBody?.(body);
      if (transport) return transport.handleRequest(req, res, body);
      if (sessionId === undefined && isInitializeRequest(body)) return openSession(req, res, body);
    } else if (req.method === 'GET' || req.method === 'DELETE') {
      if (transport) return transport.handleRequest(req, res);
    } else {
      res.setHeader('Allow', 'GET, POST, DELETE');
      return sendError(res, 405, -32600, 'Method not allowed');
    }
    // The spec's answers: 404 tells a client its session is gone and it must initialize again.
    if (sessionId !== undefined) return sendError(res, 404, -32001, 'Session not found');
    return sendError(res, 400, -32600, 'Bad Request: no valid session; send initialize first');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof BodyError) return sendError(res, error.status, error.rpcCode, error.message);
      if (!res.headersSent) sendError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${urlHost(host)}:${port}${opts.path}`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      // Open GET streams and keep-alive sockets would otherwise hold close() forever.
      server.closeAllConnections();
      await closed;
    },
  };
}

/** A wildcard bind is reached on loopback; an IPv6 literal needs brackets in a URL. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Closes `server` on SIGTERM or SIGINT and exits (0, or 1 when closing failed). */
export function closeOnSignal(server: { close(): Promise<void> }): void {
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
