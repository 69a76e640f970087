import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { LegacySession, SseStream } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client, type Json, type ListenStream } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const PRINCIPALS = ['sep-tasks', 'legacy-tasks', 'other', 'sep-streams', 'legacy-streams', 'mixed-streams', 'ids'] as const;
type Principal = (typeof PRINCIPALS)[number];
const token = (principal: Principal): string => `${principal}-token-0123456789abcdef`;
const tokensFile = join(mkdtempSync(join(tmpdir(), 'mts-limits-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(Object.fromEntries(PRINCIPALS.map((p) => [token(p), p]))));

const stack = useStack({
  stores: STORES,
  args: ['--tokens', tokensFile, '--max-open-tasks', '3'],
  env: { SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL: '2', SHIM_MAX_LISTEN_TASK_IDS: '2', SHIM_MAX_BODY_BYTES: '4096' },
});

const TOO_MANY_TASKS = 'Too many open tasks: this principal may hold 3 at once; retry when one of them ends';
const TOO_MANY_STREAMS = 'Too many open streams: this principal may hold 2 at once; retry when one of them ends';
const TOO_LONG = 'longer than 128 characters, so it names no task';
const NOT_FOUND = 'Failed to retrieve task: Task not found';
const LONG_ID = 'x'.repeat(129);
const LONGEST_ID = 'x'.repeat(128);

/** A task that waits for input until cancelled: it stays open as long as the test wants. */
const BLOCKING = { name: 'confirm_delete', arguments: { filename: 'kept-open.txt' } };

function legacyOpen(store: StoreKind, principal: Principal): Promise<LegacySession> {
  return LegacySession.open(stack.shim(store).url, { token: token(principal) });
}

function getStream(store: StoreKind, session: LegacySession): SseStream {
  return new SseStream(stack.shim(store).url, session.headers({ accept: 'text/event-stream' }), 'GET');
}

/** A stream request that is expected to be refused: its JSON answer. */
async function refusal(store: StoreKind, session: LegacySession, method: 'GET' | 'POST', body?: unknown): Promise<{ status: number; body: Json }> {
  const headers = session.headers(method === 'GET' ? { accept: 'text/event-stream' } : {});
  const res = await fetch(stack.shim(store).url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe.each(STORES)('limits with clear errors (%s store)', (store) => {
  const client = (principal: Principal): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: token(principal) });

  describe('open tasks per principal (SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL / --max-open-tasks)', () => {
    it('refuses the 4th open task of a principal on tools/call with HTTP 429 -32012, and takes one again after a task ends', async () => {
      const sep = client('sep-tasks');
      const open = await Promise.all([1, 2, 3].map(() => sep.createTask(BLOCKING.name, BLOCKING.arguments)));
      const refused = await sep.callTool(BLOCKING.name, BLOCKING.arguments);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toEqual({ code: -32012, message: TOO_MANY_TASKS, data: { limit: 3, open: 3 } });

      // Another principal is counted on its own.
      await client('other').createTask(BLOCKING.name, BLOCKING.arguments);

      expect((await sep.cancelTask(open[0].taskId)).status).toBe(200);
      const again = await sep.createTask(BLOCKING.name, BLOCKING.arguments);
      expect(again.resultType).toBe('task');
      await Promise.all([...open.slice(1), again].map((task) => sep.cancelTask(task.taskId)));
    });

    it('refuses the 4th on the legacy wires too: task-augmented tools/call and tasks/create answer -32012', async () => {
      const session = await legacyOpen(store, 'legacy-tasks');
      const open = await Promise.all([1, 2, 3].map(async () => (await session.result('tools/call', { ...BLOCKING, task: {} })).task.taskId as string));
      const refused = await session.post({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { ...BLOCKING, task: {} } });
      expect(refused.status).toBe(200);
      expect(refused.body).toEqual({ jsonrpc: '2.0', id: 41, error: { code: -32012, message: TOO_MANY_TASKS, data: { limit: 3, open: 3 } } });

      const dialect = await legacyOpen(store, 'legacy-tasks');
      const created = await dialect.request('tasks/create', BLOCKING);
      expect(created.error).toEqual({ code: -32012, message: TOO_MANY_TASKS, data: { limit: 3, open: 3 } });

      await session.result('tasks/cancel', { taskId: open[0] });
      const accepted = await dialect.result('tasks/create', BLOCKING);
      expect(accepted.taskId).toEqual(expect.any(String));
      await Promise.all(open.slice(1).map((taskId) => session.result('tasks/cancel', { taskId })));
      await dialect.result('tasks/cancel', { taskId: accepted.taskId });
    });
  });

  describe('open streams per principal (SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL)', () => {
    it('refuses a 3rd listen with HTTP 429 -32012, and takes one again once a stream closes', async () => {
      const sep = client('sep-streams');
      const first = await sep.listen({});
      const second = await sep.listen({});
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await sep.listen({});
      expect(third.status).toBe(429);
      expect((await third.json()).error).toEqual({ code: -32012, message: TOO_MANY_STREAMS, data: { limit: 2, open: 2 } });

      first.close();
      const reopened = await pollUntil(
        () => sep.listen({}),
        (stream: ListenStream) => stream.status === 200 || (stream.close(), false),
        { timeoutMs: 5_000 },
      );
      second.close();
      reopened.close();
    });

    it('refuses a 3rd legacy GET stream with HTTP 429 and a tasks/result stream with -32012', async () => {
      const session = await legacyOpen(store, 'legacy-streams');
      const first = getStream(store, session);
      const second = getStream(store, session);
      expect([(await first.ready).status, (await second.ready).status]).toEqual([200, 200]);
      const third = await refusal(store, session, 'GET');
      expect(third).toEqual({ status: 429, body: { jsonrpc: '2.0', id: null, error: { code: -32012, message: TOO_MANY_STREAMS, data: { limit: 2, open: 2 } } } });

      const taskId = (await session.result('tools/call', { ...BLOCKING, task: {} })).task.taskId as string;
      const result = await refusal(store, session, 'POST', { jsonrpc: '2.0', id: 'r1', method: 'tasks/result', params: { taskId } });
      expect(result).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 'r1', error: { code: -32012, message: TOO_MANY_STREAMS, data: { limit: 2, open: 2 } } } });
      first.close();
      second.close();
      await session.result('tasks/cancel', { taskId });
    });

    it('counts listen and legacy streams of one principal together', async () => {
      const listen = await client('mixed-streams').listen({});
      const session = await legacyOpen(store, 'mixed-streams');
      const get = getStream(store, session);
      expect([listen.status, (await get.ready).status]).toEqual([200, 200]);
      const refused = await client('mixed-streams').listen({});
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toBe(TOO_MANY_STREAMS);
      listen.close();
      get.close();
    });
  });

  describe('task id length', () => {
    it.each(['tasks/get', 'tasks/cancel', 'tasks/update'])('%s with a taskId over 128 characters is -32602 naming the bound', async (method) => {
      const params = method === 'tasks/update' ? { taskId: LONG_ID, inputResponses: {} } : { taskId: LONG_ID };
      const reply = await client('ids').request(method, params);
      expect(reply.status).toBe(200);
      expect(reply.body.error).toEqual({ code: -32602, message: `Invalid params: taskId: ${TOO_LONG}` });
    });

    it('a 128-character taskId is looked up, and not found like any unknown id', async () => {
      const reply = await client('ids').getTask(LONGEST_ID);
      expect(reply.body.error).toEqual({ code: -32602, message: NOT_FOUND });
    });

    it('a listen naming a taskId over 128 characters is -32602', async () => {
      const stream = await client('ids').listen({ notifications: { taskIds: ['AAAAAAAAAAAAAAAAAAAAAA', LONG_ID] } });
      expect(stream.status).toBe(200);
      expect((await stream.json()).error).toEqual({ code: -32602, message: `Invalid params: notifications.taskIds.1: ${TOO_LONG}` });
    });

    it.each(['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/status'])('legacy %s with a taskId over 128 characters is -32602 naming the bound', async (method) => {
      const session = await legacyOpen(store, 'ids');
      const reply = await session.request(method, { taskId: LONG_ID });
      expect(reply.error).toEqual({ code: -32602, message: `Invalid params: taskId: ${TOO_LONG}` });
    });
  });

  describe('request body size and taskIds per listen (existing limits)', () => {
    it('a body over SHIM_MAX_BODY_BYTES is HTTP 413 -32600 naming the limit, on either wire', async () => {
      const reply = await client('ids').callTool('greet', { name: 'x'.repeat(8192) });
      expect(reply.status).toBe(413);
      expect(reply.body.error).toEqual({ code: -32600, message: 'Invalid Request: Request body exceeds the 4096-byte limit' });

      const session = await legacyOpen(store, 'ids');
      const legacy = await session.post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'greet', arguments: { name: 'y'.repeat(8192) } } });
      expect(legacy.status).toBe(413);
      expect(legacy.body.error).toEqual({ code: -32600, message: 'Invalid Request: Request body exceeds the 4096-byte limit' });
    });

    it('a listen with more taskIds than SHIM_MAX_LISTEN_TASK_IDS is -32602 naming the limit', async () => {
      const ids = ['AAAAAAAAAAAAAAAAAAAAAA', 'BBBBBBBBBBBBBBBBBBBBBB', 'CCCCCCCCCCCCCCCCCCCCCC'];
      const stream = await client('ids').listen({ notifications: { taskIds: ids } });
      expect((await stream.json()).error).toEqual({ code: -32602, message: 'At most 2 taskIds per listen' });
    });
  });
});
