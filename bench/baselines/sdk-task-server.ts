/**
 * Baseline (a): what a team would otherwise run — the official MCP TypeScript SDK's own
 * 2025-11-25 task server: McpServer + StreamableHTTPServerTransport (stateful sessions, JSON
 * answers), tasks in the SDK's InMemoryTaskStore, one task tool (`greet`, taskSupport
 * required) whose job finishes at once. tasks/get is served by the SDK's own handler.
 * Usage: node --import tsx bench/baselines/sdk-task-server.ts
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const taskStore = new InMemoryTaskStore();
const transports = new Map<string, StreamableHTTPServerTransport>();

function makeServer(): McpServer {
  const server = new McpServer(
    { name: 'sdk-task-baseline', version: '1.0.0' },
    { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore, taskMessageQueue: new InMemoryTaskMessageQueue() },
  );
  server.experimental.tasks.registerToolTask(
    'greet',
    { description: 'Greets at once, as a task', inputSchema: { name: z.string() }, execution: { taskSupport: 'required' } },
    {
      async createTask({ name }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000 });
        void store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `Hello, ${name}!` }] });
        return { task };
      },
      async getTask(_args, { taskStore: store, taskId }) {
        return store.getTask(taskId);
      },
      async getTaskResult(_args, { taskStore: store, taskId }) {
        return store.getTaskResult(taskId) as never;
      },
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
        enableJsonResponse: true,
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
  console.log(`sdk-task-server listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
process.once('SIGTERM', () => {
  http.close();
  http.closeAllConnections();
  process.exit(0);
});
