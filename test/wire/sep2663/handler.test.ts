import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/core/errors.js';
import { OpenStreams } from '../../../src/http/open-streams.js';
import { Sep2663Handler } from '../../../src/wire/sep2663/handler.js';
import type { Reply } from '../../../src/wire/reply.js';
import { startInProcessCore, type InProcessCore } from '../../support/in-process-core.js';
import { buildRequest, type Json, type RequestOptions } from '../../support/sep2663-client.js';

/**
 * The SEP-2663 handler called directly, without HTTP, Redis or child processes: the embedded
 * store, the task core, an in-process queue and runner, and the demo upstream's MCP server in
 * this process behind the real upstream gateway.
 */

const ALICE = 'alice';
const BOB = 'bob';

let core: InProcessCore;
let handler: Sep2663Handler;

beforeAll(async () => {
  core = await startInProcessCore({ clientName: 'handler-test', autoWindowMs: 100, maxTtlMs: 60_000, pollIntervalMs: 500 });
  handler = new Sep2663Handler({
    service: core.service,
    catalog: core.gateway.catalog,
    upstream: core.gateway,
    serverInfo: { name: 'handler-test', version: '1.0.0' },
    maxListenTaskIds: 10,
    streams: new OpenStreams(),
  });
});

afterAll(async () => {
  await core?.close();
});

/**
 * The one place that turns a request into the handler's input: a correct 2026-07-28 request for
 * `method` (headers and body as a client sends them), the test's overrides, and the principal the
 * HTTP edge would have authenticated.
 */
function handle(method: string, params: Record<string, unknown>, opts: RequestOptions & { principal?: string } = {}): Promise<Reply> {
  const { headers, body } = buildRequest(method, params, opts);
  const signal = new AbortController().signal;
  return handler.handle({
    method: 'POST',
    headers,
    rawHeaders: Object.entries(headers).flat(),
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    principal: opts.principal ?? ALICE,
    signal: () => signal,
  });
}

/** The HTTP status and the JSON-RPC message of a reply that is not a stream. */
function answer(reply: Reply): { status: number; body: Json } {
  if (reply.kind === 'json') return { status: reply.status, body: reply.body };
  if (reply.kind === 'json-text') return { status: reply.status, body: JSON.parse(reply.text) };
  throw new Error(`expected a JSON answer, got a ${reply.kind} reply`);
}

async function call(method: string, params: Record<string, unknown>, opts: RequestOptions & { principal?: string } = {}): Promise<{ status: number; body: Json }> {
  return answer(await handle(method, params, opts));
}

/** A task of `principal`, through the handler. */
async function createTask(name: string, args: Record<string, unknown>, principal = ALICE): Promise<string> {
  const { body } = await call('tools/call', { name, arguments: args }, { principal });
  expect(body.result?.resultType, JSON.stringify(body)).toBe('task');
  return body.result.taskId as string;
}

async function waitForStatus(taskId: string, status: string): Promise<Json> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { body } = await call('tasks/get', { taskId });
    if (body.result?.status === status) return body.result;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is ${JSON.stringify(body)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('Sep2663Handler.handle (in process)', () => {
  it('answers -32021 with HTTP 400 to a client that calls a required tool without declaring the extension', async () => {
    const { status, body } = await call('tools/call', { name: 'failing_job', arguments: {} }, { tasks: false });
    expect(status).toBe(400);
    expect(body.error.code).toBe(ErrorCode.MissingRequiredClientCapability);
    expect(body.error.message).toMatch(/failing_job/);
  });

  it.each(['tasks/get', 'tasks/update', 'tasks/cancel'])('answers -32021 to %s from a client that did not declare the extension', async (method) => {
    const params = method === 'tasks/update' ? { taskId: 'x', inputResponses: {} } : { taskId: 'x' };
    const { status, body } = await call(method, params, { tasks: false });
    expect(status).toBe(400);
    expect(body.error.code).toBe(ErrorCode.MissingRequiredClientCapability);
  });

  it('answers tasks/get of an unknown id and of another principal’s task with the same -32602', async () => {
    const taskId = await createTask('slow_compute', { seconds: 30, label: 'alice-only' });
    const unknown = await call('tasks/get', { taskId: `${taskId.slice(0, -4)}zzzz` }, { id: 7 });
    const foreign = await call('tasks/get', { taskId }, { id: 7, principal: BOB });
    expect(foreign.body.error.code).toBe(ErrorCode.InvalidParams);
    expect(foreign).toEqual(unknown);
    // The owner still reads it.
    expect((await call('tasks/get', { taskId })).body.result.status).toBe('working');
    await call('tasks/cancel', { taskId });
  });

  it('answers tasks/get of its own task with the task and the server info', async () => {
    const taskId = await createTask('slow_compute', { seconds: 30, label: 'read' });
    const { status, body } = await call('tasks/get', { taskId });
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(body.result._meta['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'handler-test', version: '1.0.0' });
    await call('tasks/cancel', { taskId });
  });

  it('cancels a working task for its owner only: another principal gets -32602 and the task keeps working', async () => {
    const taskId = await createTask('slow_compute', { seconds: 30, label: 'to-cancel' });
    const foreign = await call('tasks/cancel', { taskId }, { principal: BOB });
    expect(foreign.body.error.code).toBe(ErrorCode.InvalidParams);
    expect((await call('tasks/get', { taskId })).body.result.status).toBe('working');

    const own = await call('tasks/cancel', { taskId });
    expect(own.status).toBe(200);
    expect(own.body.result.resultType).toBe('complete');
    expect((await call('tasks/get', { taskId })).body.result.status).toBe('cancelled');
  });

  it('checks tasks/update: params, the answer against its input request, the owner (a foreign task answers like an unknown one); a good answer resumes the task', async () => {
    const taskId = await createTask('confirm_delete', { filename: 'notes.txt' });
    const asking = await waitForStatus(taskId, 'input_required');
    const key = Object.keys(asking.inputRequests)[0] as string;

    const missing = await call('tasks/update', { taskId });
    expect(missing.body.error.code).toBe(ErrorCode.InvalidParams);

    const wrongShape = await call('tasks/update', { taskId, inputResponses: { [key]: { action: 'perhaps' } } });
    expect(wrongShape.body.error.code).toBe(ErrorCode.InvalidParams);
    expect(wrongShape.body.error.message).toMatch(new RegExp(`Invalid answer for input request '${key}'`));

    const yes = { [key]: { action: 'accept', content: { confirm: true } } };
    const foreign = await call('tasks/update', { taskId, inputResponses: yes }, { id: 9, principal: BOB });
    const unknown = await call('tasks/update', { taskId: `${taskId.slice(0, -4)}zzzz`, inputResponses: yes }, { id: 9 });
    expect(foreign.body.error.code).toBe(ErrorCode.InvalidParams);
    expect(foreign).toEqual(unknown);
    expect((await call('tasks/get', { taskId })).body.result.status).toBe('input_required');

    const accepted = await call('tasks/update', { taskId, inputResponses: yes });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result.resultType).toBe('complete');
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.content[0].text).toBe('Deleted notes.txt');
  });

  it('answers -32020 with HTTP 400 when Mcp-Method does not match the body', async () => {
    const { status, body } = await call('tools/list', {}, { headers: { 'mcp-method': 'tools/call' } });
    expect(status).toBe(400);
    expect(body.error.code).toBe(ErrorCode.HeaderMismatch);
    expect(body.error.message).toMatch(/Mcp-Method 'tools\/call' does not match method 'tools\/list'/);
  });

  it('answers -32020 when Mcp-Name is missing or names another tool or task', async () => {
    const otherTool = await call('tools/call', { name: 'greet', arguments: { name: 'Ada' } }, { headers: { 'mcp-name': 'slow_compute' } });
    expect(otherTool.status).toBe(400);
    expect(otherTool.body.error.code).toBe(ErrorCode.HeaderMismatch);

    const noName = await call('tasks/get', { taskId: 'abc' }, { headers: { 'mcp-name': undefined } });
    expect(noName.status).toBe(400);
    expect(noName.body.error.code).toBe(ErrorCode.HeaderMismatch);
    expect(noName.body.error.message).toMatch(/Mcp-Name header is required for tasks\/get/);
  });

  it('answers a forbidden tool synchronously, whatever the client declared', async () => {
    const { status, body } = await call('tools/call', { name: 'greet', arguments: { name: 'Ada' } });
    expect(status).toBe(200);
    expect(body.result.resultType).toBe('complete');
    expect(body.result.content[0].text).toMatch(/Ada/);
  });
});
