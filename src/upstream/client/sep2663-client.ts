import type { z } from 'zod';
import { UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../../core/errors.js';
import { META, PROTOCOL_VERSION } from '../../wire/sep2663/constants.js';
import { encodeHeaderValue } from '../../wire/sep2663/header-value.js';
import { NAME_FIELD } from '../../wire/sep2663/headers.js';
import type { JsonRpcMessage } from './answer-reader.js';
import { translateFailure } from './rpc-failure.js';
import type { UpstreamRpc } from './rpc-client.js';

export interface Sep2663CallOptions {
  /** `_meta` client capabilities of this request: a 2026-07-28 server reads nothing from earlier ones. */
  capabilities: Record<string, unknown>;
  /** Every request is bounded: no answer by then is the upstream's silence. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Progress the upstream reports on the request's answer stream (a `progressToken` is sent for it). */
  onProgress?: (message: string) => void;
}

/**
 * A stateless MCP 2026-07-28 client of the upstream (MCP 2026-07-28, Transports › Streamable
 * HTTP), on the shim's one HTTP client: one POST per request with `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and the per-request `_meta`, an answer in JSON or SSE. The official SDK
 * does not speak this revision. Every answer is checked against a wire schema; what fails it is
 * the upstream's fault (UpstreamProtocolError), a JSON-RPC error its answer (UpstreamRpcError), no
 * answer at all UnavailableError.
 */
export class Sep2663UpstreamClient {
  private nextId = 1;

  constructor(
    private readonly rpc: UpstreamRpc,
    private readonly clientInfo: { name: string; version: string },
  ) {}

  async call<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S, options: Sep2663CallOptions): Promise<z.infer<S>> {
    const id = this.nextId++;
    const meta: Record<string, unknown> = {
      [META.protocolVersion]: PROTOCOL_VERSION,
      [META.clientInfo]: this.clientInfo,
      [META.clientCapabilities]: options.capabilities,
    };
    const onProgress = options.onProgress;
    if (onProgress) meta.progressToken = id;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
    const headers: Record<string, string> = { 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-method': method };
    const field = NAME_FIELD.get(method);
    const name = field === undefined ? undefined : params[field];
    if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);

    const reader = this.rpc.send(body, id, this.rpc.headers(headers), onProgress ? (message) => progressOf(message, id, onProgress) : undefined);
    const timer = setTimeout(() => reader.abort(new UnavailableError(`upstream (no answer to ${method} within ${options.timeoutMs} ms)`)), options.timeoutMs);
    const signal = options.signal;
    const stop = (): void => reader.abort(Object.assign(new Error(`${method} aborted`), { name: 'AbortError' }));
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    let status: number;
    let message: JsonRpcMessage | undefined;
    try {
      ({ status, response: message } = await reader.answer);
    } catch (err) {
      throw translateFailure(err, method);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
    if (message?.error !== undefined) {
      const error = message.error as { code?: unknown; message?: unknown; data?: unknown };
      if (typeof error.code === 'number' && typeof error.message === 'string') throw new UpstreamRpcError(error.code, error.message, error.data);
      throw new UpstreamProtocolError(`the upstream answered ${method} with a malformed JSON-RPC error`);
    }
    if (status !== 200) {
      // An overloaded or restarting upstream may answer later; any other status is its answer.
      if (status >= 500 || status === 429) throw new UnavailableError(`upstream (${method}: HTTP ${status})`);
      throw new UpstreamProtocolError(`the upstream answered ${method} with HTTP ${status} and no JSON-RPC error`);
    }
    if (!message || !('result' in message)) throw new UpstreamProtocolError(`the upstream's answer to ${method} is not a JSON-RPC response`);
    const parsed = schema.safeParse(message.result);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ');
      throw new UpstreamProtocolError(`the upstream's ${method} result is malformed (${issues})`);
    }
    return parsed.data;
  }

  /** Closed with its replica: a mirror then stops without counting attempts against the upstream. */
  get closed(): boolean {
    return this.rpc.isClosed;
  }
}

function progressOf(message: JsonRpcMessage, token: number, onProgress: (message: string) => void): void {
  if (message.method !== 'notifications/progress') return;
  const params = message.params as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } | undefined;
  if (params?.progressToken !== token) return;
  onProgress(typeof params.message === 'string' ? params.message : params.total === undefined ? `${String(params.progress)}` : `${String(params.progress)}/${String(params.total)}`);
}
