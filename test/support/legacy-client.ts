/**
 * A raw HTTP client for the legacy session transport (MCP 2025-11-25 Streamable HTTP), for the
 * tasks/create dialect and for checks the SDK client cannot make (exact status codes, event ids,
 * resuming a GET stream with Last-Event-ID). Written from the specs, not from the shim's code.
 */
import type { Json } from './sep2663-client.js';

export interface LegacyReply {
  status: number;
  headers: Headers;
  body: Json;
}

export interface SseEvent {
  id?: string;
  data: string;
  message?: Json;
}

let nextId = 1;

export class LegacySession {
  private constructor(
    readonly url: string,
    readonly sessionId: string,
    readonly protocolVersion: string,
    private readonly token?: string,
  ) {}

  static async open(url: string, opts: { token?: string; capabilities?: Record<string, unknown>; clientInfo?: { name: string; version: string } } = {}): Promise<LegacySession> {
    const res = await fetch(url, {
      method: 'POST',
      headers: baseHeaders(opts.token),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: opts.capabilities ?? { elicitation: { form: {} } },
          clientInfo: opts.clientInfo ?? { name: 'legacy-raw-client', version: '0.1.0' },
        },
      }),
    });
    const body = (await res.json()) as Json;
    const sessionId = res.headers.get('mcp-session-id');
    if (res.status !== 200 || !sessionId) throw new Error(`initialize failed: ${res.status} ${JSON.stringify(body)}`);
    const session = new LegacySession(url, sessionId, body.result.protocolVersion as string, opts.token);
    const initialized = await session.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (initialized.status !== 202) throw new Error(`notifications/initialized: ${initialized.status}`);
    return session;
  }

  /** The same session through another replica (the shim keeps sessions in the shared store). */
  at(url: string): LegacySession {
    return new LegacySession(url, this.sessionId, this.protocolVersion, this.token);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...baseHeaders(this.token), 'mcp-session-id': this.sessionId, 'mcp-protocol-version': this.protocolVersion, ...extra };
  }

  async post(message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LegacyReply> {
    const res = await fetch(this.url, { method: 'POST', headers: this.headers(headers), body: JSON.stringify(message) });
    const text = await res.text();
    let body: Json;
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const messages = parseSse(text).map((e) => e.message).filter(Boolean);
      body = messages.find((m: Json) => m.id === message.id && ('result' in m || 'error' in m));
    } else {
      body = text ? JSON.parse(text) : undefined;
    }
    return { status: res.status, headers: res.headers, body };
  }

  /** A request; returns the JSON-RPC response body. */
  async request(method: string, params: Record<string, unknown> = {}): Promise<Json> {
    return (await this.post({ jsonrpc: '2.0', id: nextId++, method, params })).body;
  }

  async result(method: string, params: Record<string, unknown> = {}): Promise<Json> {
    const body = await this.request(method, params);
    if (!body?.result) throw new Error(`${method} failed: ${JSON.stringify(body)}`);
    return body.result;
  }

  /** Answers a pushed server request. */
  answer(id: string | number, result: Record<string, unknown>): Promise<LegacyReply> {
    return this.post({ jsonrpc: '2.0', id, result });
  }

  openGetStream(lastEventId?: string): SseStream {
    return new SseStream(this.url, this.headers(lastEventId ? { 'last-event-id': lastEventId, accept: 'text/event-stream' } : { accept: 'text/event-stream' }), 'GET');
  }

  delete(): Promise<Response> {
    return fetch(this.url, { method: 'DELETE', headers: this.headers() });
  }
}

function baseHeaders(token?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let id: string | undefined;
    const data: string[] = [];
    let any = false;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('id:')) {
        id = line.slice(3).trim();
        any = true;
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
        any = true;
      }
    }
    if (!any) continue;
    const text = data.join('\n');
    let message: Json;
    try {
      message = text ? JSON.parse(text) : undefined;
    } catch {
      message = undefined;
    }
    events.push({ id, data: text, message });
  }
  return events;
}

/** An open SSE stream; `next(predicate)` waits (bounded) for a matching event. */
export class SseStream {
  readonly events: SseEvent[] = [];
  readonly ready: Promise<Response>;
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];
  private ended = false;

  constructor(url: string, headers: Record<string, string>, method: 'GET' | 'POST', body?: string) {
    this.ready = fetch(url, { method, headers, body, signal: this.abort.signal });
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      const res = await this.ready;
      if (!res.body) return;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        const blocks = buffer.split(/\r?\n\r?\n/);
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const [event] = parseSse(`${block}\n\n`);
          if (event) this.events.push(event);
        }
        this.wake();
      }
    } catch {
      // Aborted by close().
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  async next(predicate: (e: SseEvent) => boolean, timeoutMs = 10_000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (this.ended) throw new Error(`stream ended without a matching event; saw ${JSON.stringify(this.events)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; saw ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }
}
