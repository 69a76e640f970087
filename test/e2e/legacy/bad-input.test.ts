import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

describe('bad input on the legacy wires', () => {
  const url = (): string => stack.shim().url;

  it('answers 404 for an unknown session id', async () => {
    const res = await fetch(url(), {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }),
    });
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toBe('Session not found');
  });

  it('answers 400 for a request before initialize (no session id)', async () => {
    const res = await fetch(url(), {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32600);
  });

  it('answers 404 after the session was deleted', async () => {
    const session = await LegacySession.open(url());
    expect((await session.delete()).status).toBe(200);
    const reply = await session.post({ jsonrpc: '2.0', id: 2, method: 'tasks/list', params: {} });
    expect(reply.status).toBe(404);
  });

  it('answers 404 to a GET stream of an unknown session and 400 without one', async () => {
    const unknown = await fetch(url(), { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
    expect(unknown.status).toBe(404);
    const none = await fetch(url(), { headers: { accept: 'text/event-stream' } });
    expect(none.status).toBe(400);
  });

  it('answers 400 for an MCP-Protocol-Version other than the negotiated one', async () => {
    const session = await LegacySession.open(url());
    const reply = await session.post({ jsonrpc: '2.0', id: 3, method: 'tasks/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    expect(reply.status).toBe(400);
  });

  it('answers -32602 for a malformed tasks/list cursor and for a cursor of another session', async () => {
    const session = await LegacySession.open(url());
    expect((await session.request('tasks/list', { cursor: '%%%not-a-cursor' })).error.code).toBe(-32602);
    expect((await session.request('tasks/list', { cursor: Buffer.from('{"s":1}').toString('base64url') })).error.code).toBe(-32602);

    const owner = await LegacySession.open(url());
    const ids = [];
    for (let i = 0; i < 101; i += 1) ids.push((await owner.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } })).taskId);
    const first = await owner.result('tasks/list');
    expect(first.tasks).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await owner.result('tasks/list', { cursor: first.nextCursor });
    expect(second.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[0]]);
    expect(second).not.toHaveProperty('nextCursor');
    const stolen = await session.request('tasks/list', { cursor: first.nextCursor });
    expect(stolen.error).toMatchObject({ code: -32602, message: 'Invalid cursor: it belongs to another session' });
  });

  it('answers -32602 for tasks/get, tasks/result and tasks/cancel of an unknown task', async () => {
    const session = await LegacySession.open(url());
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/status']) {
      expect((await session.request(method, { taskId: 'unknown-task-id' })).error, method).toEqual({
        code: -32602,
        message: 'Failed to retrieve task: Task not found',
      });
    }
    expect((await session.request('tasks/get', { taskId: 42 })).error.code).toBe(-32602);
  });

  it('answers -32601 for params.task on a tool that forbids tasks', async () => {
    const session = await LegacySession.open(url());
    const answer = await session.request('tools/call', { name: 'greet', arguments: { name: 'x' }, task: {} });
    expect(answer.error.code).toBe(-32601);
  });

  it('answers 400 -32700 to a body that is not JSON and keeps serving the session', async () => {
    const session = await LegacySession.open(url());
    const res = await fetch(url(), { method: 'POST', headers: session.headers(), body: '{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32700);
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    const done = await pollUntil(() => session.result('tasks/status', { taskId: created.taskId }), (t) => t.status === 'done', { timeoutMs: 10_000 });
    expect(done.status).toBe('done');
  });
});
