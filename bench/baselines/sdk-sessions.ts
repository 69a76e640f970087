/**
 * How the SDK baselines serve: stateful Streamable HTTP with the SDK's own transport, one
 * McpServer per session (as the SDK expects), on a free loopback port; prints
 * `<name> listening on <url>` and stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export function serveSdkSessions(name: string, makeServer: () => McpServer, options: { enableJsonResponse: boolean }): void {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const sessionId = req.headers['mcp-session-id'];
      const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      if (existing) return existing.handleRequest(req, res, body);
      if (req.method === 'POST' && isInitializeRequest(body)) {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          enableJsonResponse: options.enableJsonResponse,
          onsessioninitialized: (id) => void transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await makeServer().connect(transport);
        return transport.handleRequest(req, res, body);
      }
      res.writeHead(400).end();
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  http.listen(0, '127.0.0.1', () => {
    console.log(`${name} listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });
  process.once('SIGTERM', () => {
    http.close();
    http.closeAllConnections();
    process.exit(0);
  });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}
