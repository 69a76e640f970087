import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenStreams } from '../../../src/http/open-streams.js';
import { EmbeddedSessionStore } from '../../../src/session/embedded-session-store.js';
import type { AnswerSink } from '../../../src/upstream/client/rpc-client.js';
import { LegacyAdapter } from '../../../src/wire/legacy/endpoint.js';
import type { Reply, SseOut } from '../../../src/wire/reply.js';
import type { WireRequest } from '../../../src/wire/request.js';
import { startInProcessCore, type InProcessCore } from '../../support/in-process-core.js';

/**
 * The legacy adapter in process: the embedded stores, the in-process queue and worker, and the
 * demo upstream started in this process. Requests go to `handle` directly and the Replies are
 * asserted as the adapter gives them; the end-to-end tests (test/e2e/legacy/) drive the same
 * adapter over HTTP.
 */
const ALICE = 'alice';
const BOB = 'bob';
const VERSION = '2025-11-25';

let core: InProcessCore;
let adapter: LegacyAdapter;

beforeAll(async () => {
  core = await startInProcessCore({ clientName: 'adapter-test', autoWindowMs: 1_000, maxTtlMs: 600_000, pollIntervalMs: 100 });
  adapter = new LegacyAdapter({
    service: core.service,
    sessions: new EmbeddedSessionStore(),
    upstream: core.gateway.http,
    serverInfo: { name: 'adapter-test', version: '0' },
    sessionIdleTtlMs: 60_000,
    retentionMs: 600_000,
    streams: new OpenStreams(),
  });
});

afterAll(async () => {
  await core?.close();
});

let nextId = 1;

/** A request as the HTTP edge hands it over. */
function request(method: string, options: { body?: Record<string, unknown>; session?: string; principal?: string; headers?: Record<string, string> } = {}): WireRequest {
  const headers: Record<string, string> = {
    ...(options.body ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
    ...(options.session ? { 'mcp-session-id': options.session } : {}),
    ...options.headers,
  };
  const raw = options.body ? Buffer.from(JSON.stringify(options.body)) : undefined;
  return {
    method,
    headers,
    rawHeaders: Object.entries(headers).flat(),
    body: options.body,
    rawBody: raw,
    principal: options.principal ?? ALICE,
    signal: () => new AbortController().signal,
  };
}

function rpc(method: string, params: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id: nextId++, method, params };
}

async function answer(req: WireRequest): Promise<Reply> {
  return adapter.handle(req);
}

function jsonBody(reply: Reply): Record<string, unknown> & { result?: Record<string, unknown>; error?: { code: number; message: string } } {
  if (reply.kind !== 'json') throw new Error(`expected a JSON reply, got ${reply.kind}`);
  return reply.body as Record<string, unknown>;
}

async function initialize(principal = ALICE): Promise<string> {
  const reply = await answer(
    request('POST', { principal, body: rpc('initialize', { protocolVersion: VERSION, capabilities: { elicitation: {} }, clientInfo: { name: 'unit', version: '1' } }) }),
  );
  if (reply.kind !== 'json' || !reply.headers?.['mcp-session-id']) throw new Error(`initialize failed: ${JSON.stringify(reply)}`);
  return reply.headers['mcp-session-id'];
}

/** What the edge's relay writes, gathered: the gateway's HTTP client sends the forwarded request for real. */
function relayed(reply: Reply): Promise<{ status: number; headers: string[]; body: string }> {
  if (reply.kind !== 'relay') throw new Error(`expected a relay reply, got ${reply.kind}`);
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: string[] = [];
    const chunks: Buffer[] = [];
    const sink: AnswerSink = {
      bind: () => undefined,
      head: (code, list) => {
        status = code;
        headers = list;
      },
      data: (chunk) => chunks.push(chunk) > 0,
      onDrain: () => undefined,
      end: () => resolve({ status, headers, body: Buffer.concat(chunks).toString() }),
      fail: reject,
    };
    reply.via.forward(reply.request, sink);
  });
}

/** The frames an SSE Reply writes until it ends, gathered as the edge's budgeted stream would take them. */
async function streamed(reply: Reply, until: (frames: string[]) => boolean, timeoutMs = 5_000): Promise<string[]> {
  if (reply.kind !== 'sse') throw new Error(`expected an SSE reply, got ${reply.kind}`);
  const frames: string[] = [];
  const listeners: Array<() => void> = [];
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const listener of listeners.splice(0)) listener();
    reply.stream.slot?.release();
    reply.stream.closed?.();
  };
  const out: SseOut = {
    get closed() {
      return closed;
    },
    behind: false,
    write: (frame) => {
      if (closed) return false;
      frames.push(frame);
      return true;
    },
    drained: async () => !closed,
    cork: () => undefined,
    uncork: () => undefined,
    end: (frame) => {
      if (frame !== undefined) frames.push(frame);
      close();
    },
    cut: close,
    onClose: (listener) => void listeners.push(listener),
  };
  await reply.stream.run(out);
  const deadline = Date.now() + timeoutMs;
  while (!until(frames) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  close();
  return frames;
}

function messages(frames: string[]): Array<Record<string, unknown>> {
  return frames.flatMap((frame) => {
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    return data ? [JSON.parse(data) as Record<string, unknown>] : [];
  });
}

describe('LegacyAdapter.handle', () => {
  it('answers initialize with a session id of its own and the tasks capability on top of the upstream’s', async () => {
    const reply = await answer(request('POST', { body: rpc('initialize', { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'unit', version: '1' } }) }));
    expect(reply.kind).toBe('json');
    const body = jsonBody(reply);
    expect(reply.kind === 'json' && reply.headers?.['mcp-session-id']).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(body.result?.protocolVersion).toBe(VERSION);
    expect((body.result?.capabilities as Record<string, unknown>).tasks).toBeDefined();
    expect((body.result?.capabilities as Record<string, unknown>).tools).toBeDefined();
  });

  it('answers 400 without a session id and 404 for a session of another principal', async () => {
    const session = await initialize();
    const missing = await answer(request('POST', { body: rpc('ping') }));
    expect(missing).toMatchObject({ kind: 'json', status: 400 });
    const foreign = await answer(request('POST', { body: rpc('tasks/list'), session, principal: BOB }));
    expect(foreign).toMatchObject({ kind: 'json', status: 404 });
    expect(jsonBody(foreign).error?.code).toBe(-32001);
  });

  it('answers a forwarded message with a relay in the client’s upstream session, whose answer names the client’s session', async () => {
    const session = await initialize();
    const ping = rpc('ping');
    const reply = await answer(request('POST', { body: ping, session, headers: { 'mcp-protocol-version': VERSION } }));
    expect(reply.kind).toBe('relay');
    if (reply.kind !== 'relay') return;
    expect(reply.request.clientSessionId).toBe(session);
    expect(reply.request.upstreamSessionId).toBeTruthy();
    expect(reply.request.upstreamSessionId).not.toBe(session);
    const { status, headers, body } = await relayed(reply);
    expect(status).toBe(200);
    const named = headers.findIndex((item, i) => i % 2 === 0 && item === 'mcp-session-id');
    expect(named).not.toBe(-1);
    expect(headers[named + 1]).toBe(session);
    expect(body).toContain(`"id":${ping.id as number}`);
    expect(body).toContain('"result":{}');
  });

  it('rewrites tools/list with the shim’s policy as each tool’s taskSupport', async () => {
    const session = await initialize();
    const body = jsonBody(await answer(request('POST', { body: rpc('tools/list'), session })));
    const tools = body.result?.tools as Array<{ name: string; execution?: { taskSupport?: string } }>;
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toMatchObject({ greet: 'forbidden', slow_compute: 'optional', failing_job: 'required', confirm_delete: 'optional' });
  });

  it('runs a task-augmented tools/call to completion, read with tasks/get and answered on a tasks/result stream', async () => {
    const session = await initialize();
    const created = jsonBody(await answer(request('POST', { body: rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} }), session })));
    const taskId = (created.result?.task as { taskId: string }).taskId;
    expect(taskId).toBeTruthy();

    const get = rpc('tasks/get', { taskId });
    const read = jsonBody(await answer(request('POST', { body: get, session })));
    expect(read.result).toMatchObject({ taskId });

    const resultRequest = rpc('tasks/result', { taskId });
    const reply = await answer(request('POST', { body: resultRequest, session }));
    expect(reply.kind).toBe('sse');
    const frames = await streamed(reply, (sent) => messages(sent).some((m) => m.id === resultRequest.id));
    const final = messages(frames).find((m) => m.id === resultRequest.id);
    expect(final?.result).toMatchObject({ content: [{ type: 'text', text: 'Computed result after 0s' }] });
  });

  it('answers -32601 for a plain tools/call of a required tool, and -32602 for a task of another principal', async () => {
    const session = await initialize();
    const plain = jsonBody(await answer(request('POST', { body: rpc('tools/call', { name: 'failing_job', arguments: {} }), session })));
    expect(plain.error?.code).toBe(-32601);

    const bobSession = await initialize(BOB);
    const created = jsonBody(await answer(request('POST', { body: rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} }), session: bobSession, principal: BOB })));
    const taskId = (created.result?.task as { taskId: string }).taskId;
    const foreign = jsonBody(await answer(request('POST', { body: rpc('tasks/get', { taskId }), session })));
    expect(foreign.error?.code).toBe(-32602);
  });

  it('opens a GET stream as an SSE reply and ends the session on DELETE', async () => {
    const session = await initialize();
    const stream = await answer(request('GET', { session, headers: { accept: 'text/event-stream' } }));
    expect(stream.kind).toBe('sse');
    // The priming event is logged and written first, under the shim's own event id.
    const frames = await streamed(stream, (sent) => sent.length > 0);
    expect(frames[0]).toMatch(/^id: g[0-9a-f]+_\d+\ndata: \n\n$/);

    expect(await answer(request('DELETE', { session }))).toEqual({ kind: 'empty', status: 200 });
    expect(await answer(request('POST', { body: rpc('tasks/list'), session }))).toMatchObject({ kind: 'json', status: 404 });
  });
});
