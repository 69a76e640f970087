import { encodeHeaderValue, META, PROTOCOL_VERSION, TASKS_EXTENSION } from './wire.js';
import { McpHttpError, McpRequestError } from './errors.js';
import { asTaskError, InvalidAnswerError, isRecord } from './shapes.js';
import { readSseData } from './sse.js';
import type { HeadersOption } from './types.js';

export interface TransportOptions {
  url: string;
  fetch: typeof fetch;
  headers?: HeadersOption;
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
}

export interface SendOptions {
  /** The `Mcp-Name` value (tool name or task id), encoded here when needed. */
  name?: string;
  /** More headers for this request only (`Mcp-Param-*`). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export type JsonRpcMessage = Record<string, unknown>;

/**
 * One JSON-RPC request per POST on the stateless 2026-07-28 wire (MCP 2026-07-28, Transports › Streamable HTTP): the headers, the
 * per-request `_meta` (the tasks extension always declared), and an answer read from either
 * `application/json` or `text/event-stream`.
 */
export class McpTransport {
  private nextId = 1;
  private readonly capabilities: Record<string, unknown>;

  constructor(private readonly options: TransportOptions) {
    const extensions = isRecord(options.capabilities.extensions) ? options.capabilities.extensions : {};
    this.capabilities = { ...options.capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
  }

  /** Sends a request and returns its `result`; a JSON-RPC error becomes McpRequestError. */
  async request(method: string, params: Record<string, unknown>, options: SendOptions = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const response = await this.post(id, method, params, options);
    const type = mediaType(response);
    if (type === 'application/json') return resultOf(method, id, await readJson(method, response), response.status);
    if (type === 'text/event-stream') {
      for await (const message of this.messages(method, response)) {
        if (isResponseTo(message, id)) return resultOf(method, id, message, response.status);
      }
      throw new InvalidAnswerError(method, 'the event stream ended without a JSON-RPC response');
    }
    throw new InvalidAnswerError(method, `unexpected Content-Type '${response.headers.get('content-type') ?? ''}'`);
  }

  /**
   * Opens a long-lived request (`subscriptions/listen`) and yields every JSON-RPC message on
   * its event stream. Aborting `signal` closes the stream.
   */
  async stream(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<AsyncGenerator<JsonRpcMessage, void, undefined>> {
    const id = this.nextId++;
    const response = await this.post(id, method, params, { signal });
    const type = mediaType(response);
    if (type === 'application/json') {
      // Only an error answers a listen with JSON; anything else is not a stream we can use.
      resultOf(method, id, await readJson(method, response), response.status);
      throw new InvalidAnswerError(method, 'expected an event stream, got a JSON result');
    }
    if (type !== 'text/event-stream') throw new InvalidAnswerError(method, `unexpected Content-Type '${response.headers.get('content-type') ?? ''}'`);
    return this.messages(method, response);
  }

  private async post(id: number, method: string, params: Record<string, unknown>, options: SendOptions): Promise<Response> {
    const headers = new Headers(await this.extraHeaders());
    headers.set('Content-Type', 'application/json');
    headers.set('Accept', 'application/json, text/event-stream');
    headers.set('MCP-Protocol-Version', PROTOCOL_VERSION);
    headers.set('Mcp-Method', method);
    if (options.name !== undefined) headers.set('Mcp-Name', encodeHeaderValue(options.name));
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);

    const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: this.meta() } };
    const response = await this.options.fetch(this.options.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: options.signal,
    });
    if (!response.ok) throw await httpFailure(method, response);
    return response;
  }

  private meta(): Record<string, unknown> {
    return {
      [META.protocolVersion]: PROTOCOL_VERSION,
      [META.clientCapabilities]: this.capabilities,
      [META.clientInfo]: this.options.clientInfo,
    };
  }

  private async extraHeaders(): Promise<Record<string, string>> {
    const { headers } = this.options;
    return typeof headers === 'function' ? await headers() : (headers ?? {});
  }

  private async *messages(method: string, response: Response): AsyncGenerator<JsonRpcMessage, void, undefined> {
    if (!response.body) throw new InvalidAnswerError(method, 'the event stream has no body');
    for await (const data of readSseData(response.body)) {
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch {
        throw new InvalidAnswerError(method, 'an event on the stream is not JSON');
      }
      if (isRecord(message)) yield message;
    }
  }
}

function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

async function readJson(method: string, response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidAnswerError(method, 'the body is not JSON');
  }
}

function isResponseTo(message: JsonRpcMessage, id: number): boolean {
  if (!('result' in message) && !('error' in message)) return false;
  return message.id === id || (message.id === null && 'error' in message);
}

/** The `result` of a JSON-RPC response, or its error thrown as McpRequestError. */
function resultOf(method: string, id: number, message: unknown, httpStatus: number): Record<string, unknown> {
  if (!isRecord(message) || message.jsonrpc !== '2.0') throw new InvalidAnswerError(method, 'not a JSON-RPC 2.0 message');
  if ('error' in message) {
    const error = asTaskError(message.error);
    if (!error) throw new InvalidAnswerError(method, 'the error is not {code, message}');
    throw new McpRequestError(method, error, httpStatus);
  }
  if (message.id !== id) throw new InvalidAnswerError(method, `response id ${JSON.stringify(message.id)} does not match request id ${id}`);
  if (!isRecord(message.result)) throw new InvalidAnswerError(method, 'the result is not an object');
  return message.result;
}

/** A 4xx/5xx: a JSON-RPC error body (how a modern server refuses an envelope) or a plain HTTP failure. */
async function httpFailure(method: string, response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  try {
    const parsed: unknown = JSON.parse(text);
    const error = isRecord(parsed) ? asTaskError(parsed.error) : undefined;
    if (error) return new McpRequestError(method, error, response.status);
  } catch {
    // Not JSON: reported as an HTTP failure below.
  }
  return new McpHttpError(method, response.status, response.statusText, text.slice(0, 500));
}
