import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BodyError, readJsonBody } from './http-body.js';
import { createDemoMcpServer, type CallCounter } from './mcp-server.js';
import { DEMO_TOOLS } from './tools/index.js';

export const DEMO_UPSTREAM_PATH = '/mcp';

export interface DemoUpstream {
  url: string;
  /** Tool calls still running in any session (a cancelled call must drop out promptly). */
  activeToolCalls(): number;
  close(): Promise<void>;
}

/** A 2025-11-25 Streamable HTTP MCP server with sessions, serving the demo tools. */
export async function startDemoUpstream(opts: { port?: number; host?: string } = {}): Promise<DemoUpstream> {
  const host = opts.host ?? '127.0.0.1';
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const calls: CallCounter = { active: 0 };

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
    await createDemoMcpServer(DEMO_TOOLS, calls).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== DEMO_UPSTREAM_PATH) {
      return sendError(res, 404, -32600, 'Not found');
    }
    const sessionId = req.headers['mcp-session-id'];
    const transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method === 'POST') {
      const body = await readJsonBody(req);
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
    url: `http://${urlHost(host)}:${port}${DEMO_UPSTREAM_PATH}`,
    activeToolCalls: () => calls.active,
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
