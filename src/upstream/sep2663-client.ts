import { Agent, request } from 'undici';
import type { z } from 'zod';
import { UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../core/errors.js';
import { META, PROTOCOL_VERSION } from '../wire/sep2663/constants.js';
import { encodeHeaderValue } from '../wire/sep2663/header-value.js';
import { NAME_FIELD } from '../wire/sep2663/headers.js';
import type { SdkClientOptions } from './sdk-client.js';

export interface Sep2663CallOptions {
  /** `_meta` client capabilities of this request: a 2026-07-28 server reads nothing from earlier ones. */
  capabilities: Record<string, unknown>;
  /** Every request is bounded: no answer by then is the upstream's silence. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** How many bytes of an answer the client reads: a result this large is not an MCP answer. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * A stateless MCP 2026-07-28 client of the upstream (MCP 2026-07-28, Transports › Streamable HTTP): one POST per
 * request with `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the per-request `_meta`,
 * an answer in JSON or SSE. The official SDK does not speak this revision. Every answer is
 * checked against a wire schema; what fails it is the upstream's fault (UpstreamProtocolError),
 * a JSON-RPC error its answer (UpstreamRpcError), no answer at all UnavailableError.
 */
export class Sep2663UpstreamClient {
  private readonly agent = new Agent({ keepAliveTimeout: 10_000 });
  private readonly configured: Record<string, string>;
  private nextId = 1;
  private isClosed = false;

  constructor(private readonly options: SdkClientOptions) {
    this.configured = Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  }

  async call<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S, options: Sep2663CallOptions): Promise<z.infer<S>> {
    const id = this.nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          [META.protocolVersion]: PROTOCOL_VERSION,
          [META.clientInfo]: this.options.clientInfo,
          [META.clientCapabilities]: options.capabilities,
        },
      },
    });
    // Lower-case names, so that the wire headers below replace a configured one of the same name.
    const headers: Record<string, string> = {
      ...this.configured,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': method,
    };
    const field = NAME_FIELD.get(method);
    const name = field === undefined ? undefined : params[field];
    if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);

    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let status: number;
    let contentType: string;
    let text: string;
    try {
      const res = await request(this.options.url, { method: 'POST', headers, body, signal, dispatcher: this.agent });
      status = res.statusCode;
      contentType = String(res.headers['content-type'] ?? '');
      // A stream may stay open after the response (the spec says it SHOULD end): reading stops at the response.
      const stream = contentType.includes('text/event-stream');
      text = await readBounded(res.body, (sofar) => stream && readMessage(sofar, contentType, id) !== undefined);
    } catch (err) {
      if (options.signal?.aborted) throw Object.assign(new Error(`${method} aborted`), { name: 'AbortError' });
      const why = timeout.aborted ? `no answer to ${method} within ${options.timeoutMs} ms` : `${method}: ${err instanceof Error ? err.message : String(err)}`;
      throw Object.assign(new UnavailableError(`upstream (${why})`), { cause: err });
    }
    const message = readMessage(text, contentType, id);
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
    return this.isClosed;
  }

  close(): Promise<void> {
    this.isClosed = true;
    return this.agent.close();
  }
}

/** The body as text, up to MAX_ANSWER_BYTES, or up to the chunk after which `enough` holds. */
async function readBounded(body: AsyncIterable<Buffer>, enough: (text: string) => boolean): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    if (text.length + chunk.length > MAX_ANSWER_BYTES) throw new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`);
    text += decoder.decode(chunk, { stream: true });
    // Leaving the loop destroys the body: the connection is not reused for a stream that stays open.
    if (enough(text)) return text;
  }
  return text + decoder.decode();
}

/** The JSON-RPC response to request `id`, from a JSON body or the events of an SSE body. */
function readMessage(text: string, contentType: string, id: number): Record<string, unknown> | undefined {
  const candidates = contentType.includes('text/event-stream') ? sseData(text) : [text];
  for (const candidate of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const message = parsed as Record<string, unknown>;
      // A JSON body is the answer; on a stream, notifications come first and the response names our id.
      if (!contentType.includes('text/event-stream') || message.id === id) return message;
    }
  }
  return undefined;
}

function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n'),
    )
    .filter((data) => data.length > 0);
}
