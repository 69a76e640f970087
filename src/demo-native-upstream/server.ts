import type { IncomingMessage, ServerResponse } from 'node:http';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startSessionServer } from '../demo-upstream/session-server.js';
import { registerNativeTools } from './tools.js';

const NATIVE_UPSTREAM_PATH = '/mcp';
/** What the server counted and holds, as JSON: tests count the requests a mirror sends. */
const NATIVE_STATS_PATH = '/stats';

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
  const store = new CallRecordingTaskStore();
  const queue = new InMemoryTaskMessageQueue();
  const settings = { store, maxTtlMs: opts.maxTtlMs ?? 3_600_000, pollIntervalMs: opts.pollIntervalMs ?? 500, quiet: opts.quiet ?? false };
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

  function count(body: unknown): void {
    for (const message of Array.isArray(body) ? body : [body]) {
      const method = (message as { method?: unknown } | null)?.method;
      if (typeof method === 'string') requests[method] = (requests[method] ?? 0) + 1;
    }
  }

  function stats(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (path !== NATIVE_STATS_PATH || req.method !== 'GET') return false;
    const body: NativeStats = { requests, tasks: store.getAllTasks().map((task) => ({ ...task, ...store.calls.get(task.taskId) })) };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
    return true;
  }

  const server = await startSessionServer({ port: opts.port, host: opts.host, path: NATIVE_UPSTREAM_PATH, newServer, onBody: count, extra: stats });
  return {
    url: server.url,
    async close() {
      await server.close();
      store.cleanup();
    },
  };
}
