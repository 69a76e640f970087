/**
 * The upstream of the quick-call scenario: what most MCP servers in the field are — the official
 * SDK's McpServer with one plain tool registered by `registerTool` (no tasks), served over
 * stateful Streamable HTTP with the SDK's defaults (answers as SSE), one McpServer per session.
 * `echo` answers at once.
 * Usage: node --import tsx bench/baselines/sdk-plain-server.ts
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const transports = new Map<string, StreamableHTTPServerTransport>();

function makeServer(): McpServer {
  const server = new McpServer({ name: 'sdk-plain-baseline', version: '1.0.0' });
  server.registerTool('echo', { description: 'Answers at once with its text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

const http = createServer((req, res) => {
  void (async () => {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
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
  console.log(`sdk-plain-server listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
process.once('SIGTERM', () => {
  http.close();
  http.closeAllConnections();
  process.exit(0);
});
