import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../../../src/core/errors.js';
import { UpstreamRpc } from '../../../src/upstream/client/rpc-client.js';
import { Sep2663UpstreamClient } from '../../../src/upstream/client/sep2663-client.js';
import { Ack, DetailedTask } from '../../../src/wire/sep2663/result-schemas.js';

/** What the test server answers, by the task id the request names. */
type Answer = (id: unknown, res: import('node:http').ServerResponse) => void;

const seen: Array<{ headers: IncomingHttpHeaders; body: Record<string, unknown> }> = [];
const answers = new Map<string, Answer>();
let server: Server;
let url: string;

const task = { taskId: 't1', status: 'working', createdAt: '2026-07-28T10:00:00Z', lastUpdatedAt: '2026-07-28T10:00:00Z', ttlMs: 60_000 };
const json = (status: number, body: unknown): Answer => (_id, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; params: { taskId?: string; name?: string } };
      seen.push({ headers: req.headers, body });
      const answer = answers.get(body.params.taskId ?? body.params.name ?? '');
      if (answer) answer(body.id, res);
      else json(200, { jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', ...task, taskId: body.params.taskId } })(body.id, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await Promise.all(rpcs.map((rpc) => rpc.close()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const rpcs: UpstreamRpc[] = [];
const client = (maxAnswerBytes?: number) => {
  const rpc = new UpstreamRpc({ url, headers: { authorization: 'Bearer upstream-secret' }, maxAnswerBytes });
  rpcs.push(rpc);
  return Object.assign(new Sep2663UpstreamClient(rpc, { name: 'shim-test', version: '1' }), { close: () => rpc.close() });
};
const options = { capabilities: { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } }, timeoutMs: 2_000 };

describe('the stateless 2026-07-28 client of a SEP-2663 upstream', () => {
  it('sends the headers and _meta of the spec, with the configured credentials', async () => {
    const c = client();
    expect(await c.call('tasks/get', { taskId: 'plain-id' }, DetailedTask, options)).toMatchObject({ taskId: 'plain-id', status: 'working' });
    const { headers, body } = seen.at(-1)!;
    expect(headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(headers['mcp-method']).toBe('tasks/get');
    expect(headers['mcp-name']).toBe('plain-id');
    expect(headers.authorization).toBe('Bearer upstream-secret');
    expect(headers.accept).toBe('application/json, text/event-stream');
    expect(body.params).toEqual({
      taskId: 'plain-id',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'shim-test', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': options.capabilities,
      },
    });
    await c.close();
  });

  it('encodes an Mcp-Name that is not plain ASCII', async () => {
    const c = client();
    answers.set('météo', json(200, { jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } }));
    await c.call('tools/call', { name: 'météo', arguments: {} }, Ack, options);
    expect(seen.at(-1)!.headers['mcp-name']).toBe('=?base64?bcOpdMOpbw==?=');
    await c.close();
  });

  it("carries the upstream's JSON-RPC error, also on an HTTP 400", async () => {
    const c = client();
    answers.set('refused', json(400, { jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'Header mismatch: Mcp-Name' } }));
    const err = await c.call('tasks/get', { taskId: 'refused' }, DetailedTask, options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamRpcError);
    expect(err).toMatchObject({ code: -32020, message: 'Header mismatch: Mcp-Name' });
    await c.close();
  });

  it.each([
    ['not JSON', (_id: unknown, res: import('node:http').ServerResponse) => res.end('<html>oops</html>'), /is not a JSON-RPC response/],
    ['a result of the wrong shape', json(200, { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', taskId: 'shape', status: 'sideways' } }), /tasks\/get result is malformed \(/],
    ['HTTP 404 without a JSON-RPC error', json(404, { nope: true }), /answered tasks\/get with HTTP 404 and no JSON-RPC error/],
    ['a malformed JSON-RPC error', json(200, { jsonrpc: '2.0', id: 1, error: { message: 'no code' } }), /malformed JSON-RPC error/],
  ])('names an answer that is %s as the upstream protocol fault', async (name, answer, message) => {
    const c = client();
    answers.set(name, answer);
    const err = await c.call('tasks/get', { taskId: name }, DetailedTask, options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamProtocolError);
    expect((err as Error).message).toMatch(message);
    await c.close();
  });

  it('treats HTTP 503 and silence past the timeout as unreachable', async () => {
    const c = client();
    answers.set('busy', json(503, {}));
    answers.set('silent', () => undefined);
    await expect(c.call('tasks/get', { taskId: 'busy' }, DetailedTask, options)).rejects.toBeInstanceOf(UnavailableError);
    const startedAt = Date.now();
    const err = await c.call('tasks/get', { taskId: 'silent' }, DetailedTask, { ...options, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toContain('no answer to tasks/get within 300 ms');
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    await c.close();
  });

  it('reads the response from an event stream after notifications, without waiting for the stream to end', async () => {
    const c = client();
    answers.set('streamed', (id, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...task, taskId: 'streamed' } })}\n\n`);
    });
    expect(await c.call('tasks/get', { taskId: 'streamed' }, DetailedTask, options)).toMatchObject({ taskId: 'streamed' });
    await c.close();
  });

  it('refuses an answer larger than its bound as the upstream protocol fault', async () => {
    const c = client(4096);
    answers.set('huge', json(200, { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', ...task, taskId: 'huge', statusMessage: 'x'.repeat(8192) } }));
    const err = await c.call('tasks/get', { taskId: 'huge' }, DetailedTask, options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamProtocolError);
    expect((err as Error).message).toBe("the upstream's answer to tasks/get has a message larger than 4096 bytes");
    await c.close();
  });

  it('hands on the progress the upstream reports before its answer', async () => {
    const c = client();
    answers.set('progressing', (id, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const token = (seen.at(-1)!.body.params as { _meta: { progressToken: unknown } })._meta.progressToken;
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 3, message: 'step 1 of 3' } })}\n\n`);
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'another', progress: 9 } })}\n\n`);
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...task, taskId: 'progressing' } })}\n\n`);
    });
    const heard: string[] = [];
    await c.call('tasks/get', { taskId: 'progressing' }, DetailedTask, { ...options, onProgress: (message) => heard.push(message) });
    expect(heard).toEqual(['step 1 of 3']);
    await c.close();
  });
});
