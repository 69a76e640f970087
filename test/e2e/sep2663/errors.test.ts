import { request } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import type { ShimProcess } from '../../support/shim-process.js';
import {
  buildRequest,
  encodeHeaderValue,
  META,
  postRaw,
  Sep2663Client,
  TASKS_CAPABILITY,
  textOf,
  type Json,
  type Reply,
  type RequestOptions,
} from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });
const NOT_FOUND = 'Failed to retrieve task: Task not found';
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** POSTs a request built for `method`, with the body and headers changed by `edit`. */
async function send(
  url: string,
  method: string,
  params: Record<string, unknown>,
  opts: RequestOptions = {},
  edit: (body: Record<string, unknown>, headers: Record<string, string>) => void = () => {},
): Promise<Reply> {
  const { headers, body } = buildRequest(method, params, opts);
  edit(body, headers);
  return postRaw(url, JSON.stringify(body), headers);
}

function expectError(reply: Reply, http: number, code: number): Json {
  expect(reply.status, reply.text).toBe(http);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.body.jsonrpc).toBe('2.0');
  expect(reply.body.error.code, reply.text).toBe(code);
  expect(typeof reply.body.error.message).toBe('string');
  expect(reply.body).not.toHaveProperty('result');
  return reply.body.error;
}

/** A normal request through the same process, after each bad one. */
async function expectStillServing(url: string): Promise<void> {
  const result = await new Sep2663Client(url).result('tools/call', { name: 'greet', arguments: { name: 'again' } });
  expect(textOf(result)).toBe('Hello, again!');
}

describe.concurrent('errors and the order of checks (docs/architecture.md)', () => {
  const url = (): string => stack.shim().url;
  const client = (): Sep2663Client => new Sep2663Client(url());
  afterEach(async () => expectStillServing(url()));

  describe('step 2: one JSON-RPC request or notification', () => {
    it('malformed JSON is HTTP 400 -32700 with a null id', async () => {
      const { headers } = buildRequest('tools/list');
      const reply = await postRaw(url(), '{"jsonrpc":"2.0","id":1,', headers);
      expectError(reply, 400, -32700);
      expect(reply.body.id).toBeNull();
    });

    it('a wrong jsonrpc version is HTTP 400 -32600', async () => {
      expectError(await send(url(), 'tools/list', {}, {}, (body) => (body.jsonrpc = '1.0')), 400, -32600);
    });

    it('a batch array is HTTP 400 -32600', async () => {
      const { headers, body } = buildRequest('tools/list');
      expectError(await postRaw(url(), JSON.stringify([body, body]), headers), 400, -32600);
    });

    it('a JSON-RPC response object is HTTP 400 -32600', async () => {
      const { headers } = buildRequest('tools/list');
      expectError(await postRaw(url(), JSON.stringify({ jsonrpc: '2.0', id: 9, result: {} }), headers), 400, -32600);
    });

    it('a JSON value that is not an object is HTTP 400 -32600', async () => {
      const { headers } = buildRequest('tools/list');
      expectError(await postRaw(url(), '"tools/list"', headers), 400, -32600);
    });
  });

  describe('step 3: the required _meta keys', () => {
    it('a missing _meta protocolVersion is HTTP 400 -32602 echoing the id', async () => {
      const reply = await client().request('tools/list', {}, { id: 'm1', meta: { [META.protocolVersion]: undefined } });
      expectError(reply, 400, -32602);
      expect(reply.body.id).toBe('m1');
    });

    it('missing _meta clientCapabilities is HTTP 400 -32602', async () => {
      expectError(await client().request('tools/list', {}, { meta: { [META.clientCapabilities]: undefined } }), 400, -32602);
    });

    it('a missing _meta is HTTP 400 -32602 (it wins over header checks)', async () => {
      const reply = await send(url(), 'tasks/get', { taskId: UNKNOWN_ID }, { headers: { 'mcp-name': undefined } }, (body) => {
        delete (body.params as Record<string, unknown>)._meta;
      });
      expectError(reply, 400, -32602);
    });

    it('a missing clientCapabilities wins over a missing extension on tasks/get', async () => {
      const reply = await client().getTask(UNKNOWN_ID, { meta: { [META.clientCapabilities]: undefined } });
      expectError(reply, 400, -32602);
    });
  });

  describe('step 4: headers equal to the body', () => {
    it.each([
      ['MCP-Protocol-Version missing', { 'mcp-protocol-version': undefined }],
      ['MCP-Protocol-Version differing from _meta', { 'mcp-protocol-version': '2026-06-30' }],
      ['Mcp-Method missing', { 'mcp-method': undefined }],
      ['Mcp-Method differing from the body', { 'mcp-method': 'tools/list' }],
      ['Mcp-Name missing on tools/call', { 'mcp-name': undefined }],
      ['Mcp-Name differing from params.name', { 'mcp-name': 'slow_compute' }],
      ['Mcp-Name with bad base64', { 'mcp-name': '=?base64?!!!?=' }],
      ['Mcp-Name with base64 of another name', { 'mcp-name': encodeHeaderValue(' greet') }],
    ])('%s is HTTP 400 -32020', async (_name, headers) => {
      const reply = await client().callTool('greet', { name: 'x' }, { headers, id: 'h1' });
      expectError(reply, 400, -32020);
      expect(reply.body.id).toBe('h1');
    });

    it.each(['tasks/get', 'tasks/update', 'tasks/cancel'])('%s without Mcp-Name is HTTP 400 -32020', async (method) => {
      const params = method === 'tasks/update' ? { taskId: UNKNOWN_ID, inputResponses: {} } : { taskId: UNKNOWN_ID };
      expectError(await client().request(method, params, { headers: { 'mcp-name': undefined } }), 400, -32020);
    });

    it('tasks/get with Mcp-Name naming another task is HTTP 400 -32020', async () => {
      expectError(await client().getTask(UNKNOWN_ID, { headers: { 'mcp-name': 'BBBBBBBBBBBBBBBBBBBBBB' } }), 400, -32020);
    });

    it('a header mismatch is reported before a missing extension (step 4 before step 7)', async () => {
      expectError(await client().getTask(UNKNOWN_ID, { tasks: false, headers: { 'mcp-name': undefined } }), 400, -32020);
    });

    it('a base64-encoded Mcp-Name for a unicode tool name decodes and matches (the call reaches the tool lookup)', async () => {
      const name = 'météo';
      const { headers } = buildRequest('tools/call', { name, arguments: {} });
      expect(headers['mcp-name']).toBe('=?base64?bcOpdMOpbw==?=');
      const reply = await client().callTool(name, {}, { tasks: false });
      expect(reply.body.error?.code).not.toBe(-32020);
      expect(reply.body.error.message).toContain(name);
    });
  });

  describe('step 5: the protocol version', () => {
    it('an unsupported 2026-era version is HTTP 400 -32022 with data {supported, requested}', async () => {
      const reply = await client().request('tools/list', {}, {
        headers: { 'mcp-protocol-version': '2026-06-30' },
        meta: { [META.protocolVersion]: '2026-06-30' },
      });
      const error = expectError(reply, 400, -32022);
      expect(error.data).toEqual({ supported: ['2026-07-28'], requested: '2026-06-30' });
    });

    it('a version check comes after the header check', async () => {
      const reply = await client().request('tools/list', {}, {
        headers: { 'mcp-protocol-version': '2026-06-30', 'mcp-method': undefined },
        meta: { [META.protocolVersion]: '2026-06-30' },
      });
      expectError(reply, 400, -32020);
    });
  });

  describe('step 6: known methods', () => {
    it.each(['tools/unknown', 'tasks/result', 'tasks/list', 'initialize/v2'])('%s is HTTP 404 -32601', async (method) => {
      const reply = await client().request(method, { taskId: UNKNOWN_ID });
      expectError(reply, 404, -32601);
    });

    it('tasks/list is 404 -32601 even without the extension (step 6 before step 7)', async () => {
      expectError(await client().request('tasks/list', {}, { tasks: false }), 404, -32601);
    });
  });

  describe('step 7: the extension declared on this request', () => {
    it.each([
      ['tasks/get', { taskId: UNKNOWN_ID }],
      ['tasks/update', { taskId: UNKNOWN_ID, inputResponses: {} }],
      ['tasks/cancel', { taskId: UNKNOWN_ID }],
    ])('%s without the extension is HTTP 400 -32021 before any lookup (even for an unknown id)', async (method, params) => {
      const error = expectError(await client().request(method, params, { tasks: false }), 400, -32021);
      expect(error.data).toEqual({ requiredCapabilities: TASKS_CAPABILITY });
    });

    it('the extension is checked before params (taskId a number, no extension → -32021)', async () => {
      const reply = await client().request('tasks/get', { taskId: 42 }, { tasks: false, headers: { 'mcp-name': '42' } });
      expectError(reply, 400, -32021);
    });

    it('a declaration on an earlier request does not carry over', async () => {
      const c = client();
      const created = await c.createTask('slow_compute', { seconds: 5 });
      expectError(await c.getTask(created.taskId, { tasks: false }), 400, -32021);
      expectError(await c.cancelTask(created.taskId, { tasks: false }), 400, -32021);
      expect((await c.result('tasks/get', { taskId: created.taskId })).status).toBe('working');
      await c.cancelTask(created.taskId);
    });
  });

  describe('step 8: params well-formed', () => {
    it('tasks/get with a numeric taskId is -32602', async () => {
      const reply = await client().request('tasks/get', { taskId: 42 }, { headers: { 'mcp-name': '42' } });
      expectError(reply, 200, -32602);
    });

    it('tasks/get without a taskId is -32602', async () => {
      expectError(await client().request('tasks/get', {}, { headers: { 'mcp-name': UNKNOWN_ID } }), 200, -32602);
    });

    it('tasks/update with inputResponses a string is -32602', async () => {
      expectError(await client().request('tasks/update', { taskId: UNKNOWN_ID, inputResponses: 'yes' }), 200, -32602);
    });

    it('tasks/update without inputResponses is -32602', async () => {
      expectError(await client().request('tasks/update', { taskId: UNKNOWN_ID }), 200, -32602);
    });

    it('params checks come before the lookup: an unknown id with bad inputResponses is a params error, not not-found', async () => {
      const error = expectError(await client().request('tasks/update', { taskId: UNKNOWN_ID, inputResponses: [] }), 200, -32602);
      expect(error.message).not.toBe(NOT_FOUND);
    });

    it('subscriptions/listen with more taskIds than the limit (100) is -32602', async () => {
      const ids = Array.from({ length: 101 }, (_, i) => `id-${i}`);
      const stream = await client().listen({ notifications: { taskIds: ids } });
      expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await stream.json()).error.code).toBe(-32602);
    });
  });

  describe('step 9: the task must exist for this principal', () => {
    it.each([
      ['tasks/get', { taskId: UNKNOWN_ID }],
      ['tasks/update', { taskId: UNKNOWN_ID, inputResponses: {} }],
      ['tasks/cancel', { taskId: UNKNOWN_ID }],
    ])('%s on an unknown id is -32602 "Failed to retrieve task: Task not found"', async (method, params) => {
      const error = expectError(await client().request(method, params), 200, -32602);
      expect(error.message).toBe(NOT_FOUND);
    });

    it('an id that is not even of our shape gets the very same answer', async () => {
      const error = expectError(await client().getTask('not-a-task-id'), 200, -32602);
      expect(error.message).toBe(NOT_FOUND);
    });
  });

  describe('HTTP-level checks', () => {
    it('a non-JSON Content-Type is HTTP 415 with a JSON-RPC error', async () => {
      const reply = await client().request('tools/list', {}, { headers: { 'content-type': 'text/plain' } });
      expect(reply.status).toBe(415);
      expect(reply.body.error.code).toBe(-32600);
    });

    it('Content-Type application/json with a charset is accepted', async () => {
      const reply = await client().request('tools/list', {}, { headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(reply.status).toBe(200);
    });

    it('an Accept that allows neither JSON nor SSE is HTTP 406; one listing only JSON is served', async () => {
      expect((await client().request('tools/list', {}, { headers: { accept: 'text/html' } })).status).toBe(406);
      expect((await client().request('tools/list', {}, { headers: { accept: 'application/json' } })).status).toBe(200);
    });

    it.each(['GET', 'DELETE'])('%s with a 2026-07-28 MCP-Protocol-Version is HTTP 405', async (method) => {
      const res = await fetch(url(), { method, headers: { 'mcp-protocol-version': '2026-07-28', accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      await res.arrayBuffer();
    });

    it('an Origin that is not allowed is HTTP 403', async () => {
      const reply = await client().request('tools/list', {}, { headers: { origin: 'https://evil.example' } });
      expect(reply.status).toBe(403);
    });

    it('a body over the default 1 MiB limit is HTTP 413 with a JSON-RPC error; one under it is served', async () => {
      const big = await client().callTool('greet', { name: 'x'.repeat(1024 * 1024) });
      expect(big.status).toBe(413);
      expect(big.body.error.code).toBe(-32600);

      const fits = await client().callTool('greet', { name: 'y'.repeat(512 * 1024) });
      expect(fits.status).toBe(200);
      expect(textOf(fits.body.result)).toHaveLength('Hello, !'.length + 512 * 1024);
    });
  });
});

describe('a configured body limit (SHIM_MAX_BODY_BYTES)', () => {
  let small: ShimProcess;
  beforeAll(async () => {
    small = await stack.startShim({ env: { SHIM_MAX_BODY_BYTES: '2048', SHIM_ALLOWED_ORIGINS: 'https://app.example' } });
  });
  afterEach(async () => expectStillServing(small.url));

  it('a declared body over the limit is HTTP 413 with a JSON-RPC error', async () => {
    const reply = await new Sep2663Client(small.url).callTool('greet', { name: 'z'.repeat(4096) });
    expect(reply.status).toBe(413);
    expect(reply.body.error).toMatchObject({ code: -32600, message: expect.stringContaining('2048') });
  });

  it('a chunked body over the limit is refused as it streams in', async () => {
    const { headers, body } = buildRequest('tools/call', { name: 'greet', arguments: { name: 'w'.repeat(8192) } });
    const text = JSON.stringify(body);
    const { status, json } = await new Promise<{ status: number; json: Json }>((resolve, reject) => {
      const req = request(small.url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
        let data = '';
        res.on('data', (chunk: Buffer) => (data += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) }));
      });
      req.on('error', reject);
      for (let i = 0; i < text.length; i += 1024) req.write(text.slice(i, i + 1024));
      req.end();
    });
    expect(status).toBe(413);
    expect(json.error.code).toBe(-32600);
  });

  it('an allowed Origin (SHIM_ALLOWED_ORIGINS) is served, any other is HTTP 403', async () => {
    const c = new Sep2663Client(small.url);
    expect((await c.request('tools/list', {}, { headers: { origin: 'https://app.example' } })).status).toBe(200);
    const refused = await c.request('tools/list', {}, { headers: { origin: 'https://other.example' } });
    expect(refused.status).toBe(403);
  });

  it('a body under the limit is served', async () => {
    const reply = await new Sep2663Client(small.url).callTool('greet', { name: 'short' });
    expect(reply.status).toBe(200);
  });
});
