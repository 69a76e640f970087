import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode as SdkErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { UnavailableError } from '../core/errors.js';
import type { InputRequest } from '../core/task.js';
import { connectWithRetries, openSdkClient, translateError, type SdkClientOptions } from './sdk-client.js';

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

export interface UpstreamPoolOptions extends SdkClientOptions {
  /**
   * Idle connections kept for reuse; each one holds a session on the upstream. Below the number
   * of concurrent calls, every burst opens (initialize) and closes (DELETE) upstream sessions.
   */
  maxIdle?: number;
  /** Sessions opened at once; a burst of jobs waits its turn rather than flooding the upstream. */
  maxConnecting?: number;
  /**
   * Hears a failure to reach the upstream (no JSON-RPC answer: refused, closed, timed out), with
   * the operation that met it, for the log. An error the upstream answered is the caller's news.
   */
  onUnreachable?: (operation: string, err: unknown) => void;
}

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
    return this.withClient(`tools/call ${name}`, async (pooled) => {
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
    return this.withClient('tools/list', async ({ client }) => {
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
    return this.withClient(method, ({ client }) => client.request({ method, params } as never, schema as never, { signal }) as Promise<z.infer<S>>);
  }

  /** What the upstream said it serves when a client connected (the same for every session). */
  async capabilities(): Promise<Record<string, unknown>> {
    this.serverCapabilities ??= await this.withClient('initialize', async ({ client }) => (client.getServerCapabilities() ?? {}) as Record<string, unknown>);
    return this.serverCapabilities;
  }

  async ping(): Promise<boolean> {
    try {
      // Readiness probes ask often; their answer (`/readyz`) is the report.
      await this.withClient(undefined, ({ client }) => client.ping());
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

  /** Runs `fn` on a pooled client; `operation` names it to `onUnreachable` (none: not reported). */
  private async withClient<T>(operation: string | undefined, fn: (pooled: PooledClient) => Promise<T>): Promise<T> {
    let pooled: PooledClient;
    try {
      pooled = this.idle.pop() ?? (await this.open());
    } catch (err) {
      this.unreachable(operation, err);
      throw err;
    }
    let healthy = true;
    try {
      return await fn(pooled);
    } catch (err) {
      healthy = err instanceof McpError && err.code !== SdkErrorCode.ConnectionClosed;
      if (!healthy) this.unreachable(operation, err);
      throw translateError(err);
    } finally {
      pooled.lease.onInput = undefined;
      this.release(pooled, healthy);
    }
  }

  private unreachable(operation: string | undefined, err: unknown): void {
    // A call the client or the task's cancel aborted did reach the upstream.
    if (operation === undefined || this.closed || (err instanceof Error && err.name === 'AbortError')) return;
    try {
      this.options.onUnreachable?.(operation, err);
    } catch {
      // The log never fails a call.
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
      return await connectWithRetries(() => this.connect(), () => this.closed);
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
    const lease: Lease = {};
    const { client } = await openSdkClient(this.options, () => lease.onInput && ((request, _id, signal) => lease.onInput!(request, signal)));
    const pooled = { client, lease };
    this.all.add(pooled);
    return pooled;
  }
}
