/**
 * A raw fetch client for the MCP 2026-07-28 stateless wire with the SEP-2663 Tasks extension.
 * It builds correct requests by default and lets a test override or omit any header or `_meta`
 * key, so that each check of the server can be hit on its own. Written from the spec, not from
 * the shim's sources, so that it tests them.
 */

export const PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;
export const TASKS_CAPABILITY = { extensions: { [TASKS_EXTENSION]: {} } };

/** `params` field `Mcp-Name` carries, per method (MCP 2026-07-28, Transports › Streamable HTTP, request headers). */
const NAME_FIELD: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export type JsonRpcId = string | number;
// Test code reads deep into answers; `any` keeps those reads short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface RequestOptions {
  id?: JsonRpcId;
  /** Declare the tasks extension on this request (default true). */
  tasks?: boolean;
  /** Client capabilities besides the extension (default `{elicitation: {}}`). */
  capabilities?: Record<string, unknown>;
  /** `_meta` keys to set or, with `undefined`, to leave out. */
  meta?: Record<string, unknown>;
  /** Headers to set or, with `undefined`, to leave out. Names are case-insensitive. */
  headers?: Record<string, string | undefined>;
  /** `Authorization: Bearer <token>`. */
  token?: string;
  signal?: AbortSignal;
}

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  body: Json;
  text: string;
}

let nextId = 1;

/** `=?base64?…?=` unless the value is plain visible ASCII without edge whitespace (MCP 2026-07-28, header value encoding). */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7E]([\x20-\x7E\t]*[\x21-\x7E])?$/.test(value) && !/^=\?base64\?.*\?=$/s.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

export function capabilitiesFor(opts: RequestOptions): Record<string, unknown> {
  const base = opts.capabilities ?? { elicitation: {} };
  if (opts.tasks === false) return base;
  const extensions = { ...((base.extensions as Record<string, unknown> | undefined) ?? {}), [TASKS_EXTENSION]: {} };
  return { ...base, extensions };
}

/** Headers and body of a correct request for `method`, then the test's overrides. */
export function buildRequest(
  method: string,
  params: Record<string, unknown> = {},
  opts: RequestOptions = {},
): { headers: Record<string, string>; body: Record<string, unknown> } {
  const meta: Record<string, unknown> = {
    [META.protocolVersion]: PROTOCOL_VERSION,
    [META.clientCapabilities]: capabilitiesFor(opts),
    [META.clientInfo]: { name: 'e2e-client', version: '1.0.0' },
  };
  for (const [key, value] of Object.entries(opts.meta ?? {})) {
    if (value === undefined) delete meta[key];
    else meta[key] = value;
  }
  const body = { jsonrpc: '2.0', id: opts.id ?? `e2e-${nextId++}`, method, params: { ...params, _meta: meta } };

  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  const field = NAME_FIELD[method];
  const name = field ? params[field] : undefined;
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  for (const [key, value] of Object.entries(opts.headers ?? {})) {
    if (value === undefined) delete headers[key.toLowerCase()];
    else headers[key.toLowerCase()] = value;
  }
  return { headers, body };
}

/** One POST with the body exactly as given. */
export async function postRaw(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Reply> {
  const res = await fetch(url, { method: 'POST', headers, body, signal });
  return readReply(res);
}

export async function readReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: Json;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export interface PollOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Calls `fn` until `predicate` holds, bounded by `timeoutMs`; fails with the last value seen. */
export async function pollUntil<T>(fn: () => Promise<T>, predicate: (value: T) => boolean, opts: PollOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (predicate(last)) return last;
    if (Date.now() + intervalMs > deadline) {
      throw new Error(`pollUntil: condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A 2026-07-28 client bound to one endpoint and default options (token, capabilities). */
export class Sep2663Client {
  constructor(
    readonly url: string,
    readonly defaults: RequestOptions = {},
  ) {}

  async request(method: string, params: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<Reply> {
    const merged = this.merge(opts);
    const { headers, body } = buildRequest(method, params, merged);
    return postRaw(this.url, JSON.stringify(body), headers, merged.signal);
  }

  /** The result of a request that must succeed with HTTP 200. */
  async result(method: string, params: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<Json> {
    const reply = await this.request(method, params, opts);
    if (reply.status !== 200 || reply.body?.result === undefined) {
      throw new Error(`${method} failed: HTTP ${reply.status} ${reply.text}`);
    }
    return reply.body.result;
  }

  callTool(name: string, args: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<Reply> {
    return this.request('tools/call', { name, arguments: args }, opts);
  }

  getTask(taskId: string, opts: RequestOptions = {}): Promise<Reply> {
    return this.request('tasks/get', { taskId }, opts);
  }

  updateTask(taskId: string, inputResponses: Record<string, unknown>, opts: RequestOptions = {}): Promise<Reply> {
    return this.request('tasks/update', { taskId, inputResponses }, opts);
  }

  cancelTask(taskId: string, opts: RequestOptions = {}): Promise<Reply> {
    return this.request('tasks/cancel', { taskId }, opts);
  }

  /** Creates a task: fails unless the call answers a CreateTaskResult. */
  async createTask(name: string, args: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<Json> {
    const result = await this.result('tools/call', { name, arguments: args }, opts);
    if (result.resultType !== 'task') throw new Error(`${name} did not create a task: ${JSON.stringify(result)}`);
    return result;
  }

  /** Polls `tasks/get` until `predicate` holds on the task (the GetTaskResult). */
  waitForTask(taskId: string, predicate: (task: Json) => boolean, opts: PollOptions & RequestOptions = {}): Promise<Json> {
    return pollUntil(() => this.result('tasks/get', { taskId }, opts), predicate, opts);
  }

  waitForStatus(taskId: string, status: string | string[], opts: PollOptions & RequestOptions = {}): Promise<Json> {
    const wanted = Array.isArray(status) ? status : [status];
    return this.waitForTask(taskId, (task) => wanted.includes(task.status), opts);
  }

  /** `subscriptions/listen`; the stream stays open until `close()`. */
  async listen(params: Record<string, unknown>, opts: RequestOptions = {}): Promise<ListenStream> {
    const merged = this.merge(opts);
    const abort = new AbortController();
    const { headers, body } = buildRequest('subscriptions/listen', params, merged);
    const res = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: abort.signal });
    return new ListenStream(res, abort, body.id as JsonRpcId);
  }

  private merge(opts: RequestOptions): RequestOptions {
    return { ...this.defaults, ...opts };
  }
}

export type SseEvent = { kind: 'message'; data: Json } | { kind: 'comment'; text: string };

/**
 * An SSE response read as it arrives: each `data:` event parsed as JSON, each comment line
 * (`: keep-alive`) as its own event. Every read is bounded.
 */
export class ListenStream {
  readonly status: number;
  readonly headers: Headers;
  private readonly events: SseEvent[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private failure: unknown;

  constructor(
    private readonly res: Response,
    private readonly abort: AbortController,
    readonly id: JsonRpcId,
  ) {
    this.status = res.status;
    this.headers = res.headers;
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) void this.pump();
    else this.ended = true;
  }

  /** The JSON body of a non-stream answer (an error). */
  async json(): Promise<Json> {
    return this.res.json();
  }

  /** The next event, or undefined when the stream ended; throws after `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0) {
      if (this.ended) {
        if (this.failure && !this.abort.signal.aborted) throw this.failure;
        return undefined;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.events.shift();
  }

  /** The next `data:` message (comments skipped) that matches `predicate`; throws after `timeoutMs`. */
  async nextMessage(predicate: (message: Json) => boolean = () => true, timeoutMs = 10_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (event === undefined) throw new Error('the listen stream ended');
      if (event.kind === 'message' && predicate(event.data)) return event.data;
    }
  }

  /** Every event already received, without waiting. */
  drain(): SseEvent[] {
    return this.events.splice(0);
  }

  close(): void {
    this.abort.abort();
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let data: string[] = [];
    try {
      for await (const chunk of this.res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (data.length > 0) this.push({ kind: 'message', data: JSON.parse(data.join('\n')) });
            data = [];
          } else if (line.startsWith(':')) {
            this.push({ kind: 'comment', text: line.slice(1).trim() });
          } else if (line.startsWith('data:')) {
            data.push(line.slice(5).replace(/^ /, ''));
          }
        }
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private push(event: SseEvent): void {
    this.events.push(event);
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

/** The text of a CallToolResult. */
export function textOf(result: Json): string {
  return ((result?.content ?? []) as Array<{ type: string; text?: string }>).map((block) => (block.type === 'text' ? block.text : '')).join('');
}
