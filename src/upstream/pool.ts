import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode as SdkErrorCode,
  ListRootsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ShimError, UnavailableError, UpstreamRpcError } from '../core/errors.js';
import type { InputRequest } from '../core/task.js';
import { relayValidator } from './relay-validator.js';

/** Answers one server → client request (elicitation, sampling, roots) raised during a call. */
export type InputHandler = (request: InputRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;

export interface CallOptions {
  signal?: AbortSignal;
  /** Bounded by the task's TTL, never by the SDK's 60 s default. */
  timeoutMs: number;
  onInput?: InputHandler;
  onProgress?: (message: string) => void;
}

interface Lease {
  onInput?: InputHandler;
}

interface PooledClient {
  client: Client;
  lease: Lease;
}

export interface UpstreamPoolOptions {
  url: string;
  /** The shim's own credentials at the upstream, on every request of every client. */
  headers?: Readonly<Record<string, string>>;
  clientInfo: { name: string; version: string };
  /**
   * Idle connections kept for reuse; each one holds a session on the upstream. Below the number
   * of concurrent calls, every burst opens (initialize) and closes (DELETE) upstream sessions.
   */
  maxIdle?: number;
  /** Sessions opened at once; a burst of jobs waits its turn rather than flooding the upstream. */
  maxConnecting?: number;
}

/**
 * Attempts to open an upstream session before a call gives up. Opening sends no tool call, so a
 * failed attempt (a reset or refused connection while the upstream is swamped) is safe to repeat.
 */
const CONNECT_ATTEMPTS = 3;
const CONNECT_RETRY_MS = 200;
const DEFAULT_MAX_IDLE = 16;
const DEFAULT_MAX_CONNECTING = 32;

/**
 * Clients of the upstream MCP server, one call per client at a time: server → client requests
 * arrive on the client, not on the call, so a client dedicated to one call knows whose input
 * an elicitation is.
 */
export class UpstreamPool {
  private readonly idle: PooledClient[] = [];
  private readonly all = new Set<PooledClient>();
  /** Callers waiting for one of the `maxConnecting` turns to open a session. */
  private readonly connectQueue: Array<() => void> = [];
  private connecting = 0;
  private closed = false;
  private serverCapabilities: Record<string, unknown> | undefined;

  constructor(private readonly options: UpstreamPoolOptions) {}

  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    return this.withClient(async (pooled) => {
      pooled.lease.onInput = options.onInput;
      const onProgress = options.onProgress;
      const result = await pooled.client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
        signal: options.signal,
        timeout: options.timeoutMs,
        maxTotalTimeout: options.timeoutMs,
        onprogress: onProgress
          ? (p) => onProgress(p.message ?? (p.total === undefined ? `${p.progress}` : `${p.progress}/${p.total}`))
          : undefined,
      });
      return result as Record<string, unknown>;
    });
  }

  /** Every tool of the upstream, all pages. */
  async listTools(): Promise<Tool[]> {
    return this.withClient(async ({ client }) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    });
  }

  /** A plain request translated for a stateless client (resources, prompts, ping). */
  async request<S extends z.ZodType>(method: string, params: Record<string, unknown> | undefined, schema: S, signal?: AbortSignal): Promise<z.infer<S>> {
    return this.withClient(({ client }) => client.request({ method, params } as never, schema as never, { signal }) as Promise<z.infer<S>>);
  }

  /** What the upstream said it serves when a client connected (the same for every session). */
  async capabilities(): Promise<Record<string, unknown>> {
    this.serverCapabilities ??= await this.withClient(async ({ client }) => (client.getServerCapabilities() ?? {}) as Record<string, unknown>);
    return this.serverCapabilities;
  }

  async ping(): Promise<boolean> {
    try {
      await this.withClient(({ client }) => client.ping());
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const clients = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.allSettled(clients.map((c) => c.client.close()));
  }

  private async withClient<T>(fn: (pooled: PooledClient) => Promise<T>): Promise<T> {
    const pooled = this.idle.pop() ?? (await this.open());
    let healthy = true;
    try {
      return await fn(pooled);
    } catch (err) {
      healthy = err instanceof McpError && err.code !== SdkErrorCode.ConnectionClosed;
      throw translateError(err);
    } finally {
      pooled.lease.onInput = undefined;
      this.release(pooled, healthy);
    }
  }

  private release(pooled: PooledClient, healthy: boolean): void {
    if (healthy && !this.closed && this.idle.length < (this.options.maxIdle ?? DEFAULT_MAX_IDLE)) {
      this.idle.push(pooled);
      return;
    }
    this.all.delete(pooled);
    void pooled.client.close().catch(() => undefined);
  }

  /** A new session, opened in turn with at most `maxConnecting` others and retried while the connection fails. */
  private async open(): Promise<PooledClient> {
    if (this.connecting >= (this.options.maxConnecting ?? DEFAULT_MAX_CONNECTING)) {
      await new Promise<void>((resolve) => this.connectQueue.push(resolve));
      // A session released while this caller waited serves it without opening another.
      const idle = this.idle.pop();
      if (idle) {
        this.nextConnect();
        return idle;
      }
    }
    this.connecting++;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.connect();
        } catch (err) {
          // An upstream that answered with a JSON-RPC error or is closed will not change its mind.
          if (attempt >= CONNECT_ATTEMPTS || this.closed || !(err instanceof UnavailableError)) throw err;
          await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS * attempt));
        }
      }
    } finally {
      this.connecting--;
      this.nextConnect();
    }
  }

  private nextConnect(): void {
    this.connectQueue.shift()?.();
  }

  private async connect(): Promise<PooledClient> {
    if (this.closed) throw new UnavailableError('upstream pool (closed)');
    const client = new Client(this.options.clientInfo, {
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      jsonSchemaValidator: relayValidator,
    });
    const lease: Lease = {};
    const forward = (method: string) => async (request: { params?: Record<string, unknown> }, extra: { signal: AbortSignal }) => {
      if (!lease.onInput) throw new McpError(SdkErrorCode.MethodNotFound, `${method} is not available for this call`);
      const { _meta: _ignored, ...params } = request.params ?? {};
      try {
        return await lease.onInput({ method, params }, extra.signal);
      } catch (err) {
        // The core answers the upstream with our errors; the SDK sends only McpError codes as they are.
        if (err instanceof ShimError) throw new McpError(err.code, err.message, err.data);
        throw err;
      }
    };
    client.setRequestHandler(ElicitRequestSchema, forward('elicitation/create') as never);
    client.setRequestHandler(CreateMessageRequestSchema, forward('sampling/createMessage') as never);
    client.setRequestHandler(ListRootsRequestSchema, forward('roots/list') as never);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(this.options.url), { requestInit: { headers: { ...this.options.headers } } }));
    } catch (err) {
      await client.close().catch(() => undefined);
      throw translateError(err);
    }
    const pooled = { client, lease };
    this.all.add(pooled);
    return pooled;
  }
}

const SDK_PREFIX = /^MCP error -?\d+: /;

/**
 * A JSON-RPC error from the upstream is the tool's own answer and travels on unchanged (the SDK
 * prefixes its message, which we strip). Anything else means we could not reach the upstream.
 */
function translateError(err: unknown): unknown {
  if (err instanceof ShimError) return err;
  if (err instanceof McpError) {
    if (err.code === SdkErrorCode.ConnectionClosed) return new UnavailableError('upstream');
    return new UpstreamRpcError(err.code, err.message.replace(SDK_PREFIX, ''), err.data);
  }
  if (err instanceof Error && err.name === 'AbortError') return err;
  return new UnavailableError(`upstream (${err instanceof Error ? err.message : String(err)})`);
}
