import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { writeTokensFile } from '../../support/observe.js';
import { Sep2663Client, type Json } from '../../support/sep2663-client.js';

/** Names of properties every plain object has (or inherits), which a lookup table must not find. */
const PROTOTYPE_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf', '__defineGetter__'];
const TOKEN = 'proto-token-0123456789abcdef';
const PRINCIPAL = 'proto-principal';
const stack = useStack({ stores: ['redis', 'embedded'], args: ['--tokens', writeTokensFile({ [TOKEN]: PRINCIPAL })] });

describe.each(['redis', 'embedded'] as const)('prototype property names on the wires (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: TOKEN });

  it.each(PROTOTYPE_NAMES)('answers -32601 to the SEP-2663 method %s and echoes nothing of the request', async (method) => {
    // Mcp-Name set, so that the header checks cannot be what refuses it.
    const reply = await client().request(method, { name: 'greet' }, { id: 7, headers: { 'mcp-name': 'greet' } });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: expect.any(String) } });
    expect(reply.text).not.toContain(TOKEN);
    expect(reply.text).not.toContain(PRINCIPAL);
    expect(reply.text).not.toContain('authorization');
  });

  it.each(['__proto__', 'constructor', 'toString'])('treats a SEP-2663 tool named %s as an unknown tool', async (name) => {
    const unknown = await client().callTool('no_such_tool', {}, { id: 1 });
    const reply = await client().callTool(name, {}, { id: 1 });
    expect(unknown.body.error.code).toBe(-32602);
    expect(reply.status).toBe(unknown.status);
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toBe(unknown.body.error.message.replace('no_such_tool', name));
  });

  it.each(['__proto__', 'constructor'])('answers tasks/get of the task id %s like an unknown id', async (taskId) => {
    const unknown = await client().getTask('AAAAAAAAAAAAAAAAAAAAAA', { id: 1 });
    const reply = await client().getTask(taskId, { id: 1 });
    expect(reply.status).toBe(unknown.status);
    expect(reply.body).toEqual(unknown.body);
  });

  it('ignores tasks/update answers keyed by prototype names, as for any key that is not outstanding', async () => {
    const created = await client().createTask('confirm_delete', { filename: 'proto.txt' });
    const task = await client().waitForStatus(created.taskId, 'input_required');
    const answers = Object.fromEntries(PROTOTYPE_NAMES.map((key) => [key, { bogus: true }]));
    const reply = await client().request('tasks/update', { taskId: created.taskId, inputResponses: answers });
    expect(reply.body).toEqual({ jsonrpc: '2.0', id: expect.anything(), result: expect.objectContaining({ resultType: 'complete' }) });
    const after = await client().result('tasks/get', { taskId: created.taskId });
    expect(after.status).toBe('input_required');
    expect(after.inputRequests).toEqual(task.inputRequests);
    await client().cancelTask(created.taskId);
  });

  it.each(['__proto__', 'constructor'])('refuses a task-augmented legacy tools/call of the tool %s like an unknown tool, creating no task', async (name) => {
    const session = await LegacySession.open(stack.shim(store).url, { token: TOKEN });
    const unknown: Json = await session.request('tools/call', { name: 'no_such_tool', arguments: {}, task: {} });
    const reply: Json = await session.request('tools/call', { name, arguments: {}, task: {} });
    expect(unknown.error.code).toBe(-32602);
    expect(reply.error).toEqual({ code: -32602, message: unknown.error.message.replace('no_such_tool', name) });
    const created: Json = await session.request('tasks/create', { name, arguments: {} });
    expect(created.error.code).toBe(-32602);
    expect((await session.result('tasks/list')).tasks).toEqual([]);
  });

  it.each(['constructor', 'toString', '__proto__'])('forwards the legacy method %s to the upstream, which does not know it', async (method) => {
    const session = await LegacySession.open(stack.shim(store).url, { token: TOKEN });
    const reply: Json = await session.request(method, {});
    expect(reply.error.code).toBe(-32601);
    expect(JSON.stringify(reply)).not.toContain(TOKEN);
  });
});
