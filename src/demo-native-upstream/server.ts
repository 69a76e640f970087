import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BodyError, readJsonBody } from '../demo-upstream/http-body.js';
import { registerNativeTools } from './tools.js';

export const NATIVE_UPSTREAM_PATH = '/mcp';
/** What the server counted and holds, as JSON: tests count the requests a mirror sends. */
export const NATIVE_STATS_PATH = '/stats';

export interface NativeUpstreamOptions {
  port?: number;
  host?: string;
  /** Ceiling on a task's TTL (default one hour). */
  maxTtlMs?: number;
  /** The pollInterval the tasks advertise (default 500 ms). */
  pollIntervalMs?: number;
  /** Send no `notifications/tasks/status` (clients must poll tasks/get). */
  quiet?: boolean;
}

export interface NativeUpstream {
  url: string;
  close(): Promise<void>;
}

export interface NativeStats {
  /** JSON-RPC requests received, by method. */
  requests: Record<string, number>;
  /** Every task the store holds, as tasks/get shows it, with the call that created it. */
  tasks: Array<{ taskId: string; status: string; statusMessage?: string; ttl: number | null; tool?: string; arguments?: Record<string, unknown> }>;
}

/** The SDK's store, remembering which call created each task (for /stats). */
class CallRecordingTaskStore extends InMemoryTaskStore {
  readonly calls = new Map<string, { tool?: string; arguments?: Record<string, unknown> }>();

  override async createTask(...args: Parameters<InMemoryTaskStore['createTask']>): ReturnType<InMemoryTaskStore['createTask']> {
    const task = await super.createTask(...args);
    const params = args[2].params as { name?: string; arguments?: Record<string, unknown> } | undefined;
    this.calls.set(task.taskId, { tool: params?.name, arguments: params?.arguments });
    return task;
  }
}

/**
 * A 2025-11-25 MCP server whose tools run as tasks, built on the official SDK's own task server:
 * `registerToolTask`, `InMemoryTaskStore` and `InMemoryTaskMessageQueue` (side-channel requests
 * go out on the client's tasks/result stream). Sessions as the SDK's Streamable HTTP transport
 * expects, one McpServer each, one task store for all.
 */
export async function startNativeUpstream(opts: NativeUpstreamOptions = {}): Promise<NativeUpstream> {
  const host = opts.host ?? '127.0.0.1';
  const store = new CallRecordingTaskStore();
  const queue = new InMemoryTaskMessageQueue();
  const settings = { store, maxTtlMs: opts.maxTtlMs ?? 3_600_000, pollIntervalMs: opts.pollIntervalMs ?? 500, quiet: opts.quiet ?? false };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const requests: Record<string, number> = {};

  function newServer(): McpServer {
    const mcp = new McpServer(
      { name: 'demo-native-upstream', version: '1.0.0' },
      {
        capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: store,
        taskMessageQueue: queue,
      },
    );
    registerNativeTools(mcp, settings);
    return mcp;
  }

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
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  function count(body: unknown): void {
    for (const message of Array.isArray(body) ? body : [body]) {
      const method = (message as { method?: unknown } | null)?.method;
      if (typeof method === 'string') requests[method] = (requests[method] ?? 0) + 1;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === NATIVE_STATS_PATH && req.method === 'GET') {
      const stats: NativeStats = { requests, tasks: store.getAllTasks().map((task) => ({ ...task, ...store.calls.get(task.taskId) })) };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(JSON.stringify(stats));
    }
    if (path !== NATIVE_UPSTREAM_PATH) return sendError(res, 404, -32600, 'Not found');
    const sessionId = req.headers['mcp-session-id'];
    const transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method === 'POST') {
      const body = await readJsonBody(req);
      count(body);
      if (transport) return transport.handleRequest(req, res, body);
      if (sessionId === undefined && isInitializeRequest(body)) return openSession(req, res, body);
    } else if (req.method === 'GET' || req.method === 'DELETE') {
      if (transport) return transport.handleRequest(req, res);
    } else {
      res.setHeader('Allow', 'GET, POST, DELETE');
      return sendError(res, 405, -32600, 'Method not allowed');
    }
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
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${NATIVE_UPSTREAM_PATH}`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      store.cleanup();
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeAllConnections();
      await closed;
    },
  };
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
