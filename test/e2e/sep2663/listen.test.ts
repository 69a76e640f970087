import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { META, Sep2663Client, TASKS_CAPABILITY, textOf, type Json, type ListenStream } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, env: { SHIM_LISTEN_KEEPALIVE_MS: '200' } });
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

const isTaskNote = (taskId: string, status?: string) => (m: Json): boolean =>
  m.method === 'notifications/tasks' && m.params.taskId === taskId && (status === undefined || m.params.status === status);

describe.concurrent.each(STORES)('subscriptions/listen with taskIds (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  async function withStream<T>(stream: ListenStream, fn: (s: ListenStream) => Promise<T>): Promise<T> {
    try {
      return await fn(stream);
    } finally {
      stream.close();
    }
  }

  it('answers a text/event-stream with X-Accel-Buffering: no, whose first message is the ack listing only known ids', async () => {
    const c = client();
    const a = await c.createTask('slow_compute', { seconds: 30 });
    const b = await c.createTask('failing_job');
    await withStream(await c.listen({ notifications: { taskIds: [a.taskId, UNKNOWN_ID, b.taskId] } }, { id: 'L1' }), async (stream) => {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(stream.headers.get('x-accel-buffering')).toBe('no');
      const first = await stream.nextMessage();
      expect(first.method).toBe('notifications/subscriptions/acknowledged');
      expect(first.params._meta[META.subscriptionId]).toBe('L1');
      expect([...first.params.notifications.taskIds].sort()).toEqual([a.taskId, b.taskId].sort());
    });
    await c.cancelTask(a.taskId);
  });

  it('sends one snapshot per accepted id right after the ack, each the DetailedTask without resultType', async () => {
    const c = client();
    const a = await c.createTask('slow_compute', { seconds: 30 });
    const done = await c.createTask('slow_compute', { seconds: 1.5 });
    const finished = await c.waitForStatus(done.taskId, 'completed');
    await withStream(await c.listen({ notifications: { taskIds: [a.taskId, done.taskId, a.taskId] } }, { id: 7 }), async (stream) => {
      const ack = await stream.nextMessage();
      expect(ack.params.notifications.taskIds).toHaveLength(2);
      const snapshots = [await stream.nextMessage(), await stream.nextMessage()];
      for (const note of snapshots) {
        expect(note.jsonrpc).toBe('2.0');
        expect(note.method).toBe('notifications/tasks');
        expect(note).not.toHaveProperty('id');
        expect(note.params._meta[META.subscriptionId]).toBe(7);
        expect(note.params).not.toHaveProperty('resultType');
      }
      const byId = new Map(snapshots.map((n) => [n.params.taskId, n.params]));
      expect(byId.get(a.taskId)).toMatchObject({ status: 'working', createdAt: a.createdAt, ttlMs: a.ttlMs });
      const { resultType: _rt, _meta: _m, ...expected } = finished;
      const { _meta: _sub, ...snapshot } = byId.get(done.taskId);
      expect(snapshot).toEqual(expected);
    });
    await c.cancelTask(a.taskId);
  });

  it('pushes the full DetailedTask, result included, when a task completes', async () => {
    const c = client();
    const created = await c.createTask('failing_job');
    await withStream(await c.listen({ notifications: { taskIds: [created.taskId] } }, { id: 'L-done' }), async (stream) => {
      const ack = await stream.nextMessage();
      expect(ack.params.notifications.taskIds).toEqual([created.taskId]);
      const note = await stream.nextMessage(isTaskNote(created.taskId, 'completed'));
      expect(note.params._meta[META.subscriptionId]).toBe('L-done');
      expect(note.params.result.isError).toBe(true);
      expect(textOf(note.params.result)).toBe('Job failed: simulated failure');
      expect(note.params).toMatchObject({ taskId: created.taskId, createdAt: created.createdAt, ttlMs: created.ttlMs });
      expect(typeof note.params.lastUpdatedAt).toBe('string');
    });
  });

  it('pushes input_required with inputRequests, then the outcome after tasks/update', async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: 'pushed.txt' });
    await withStream(await c.listen({ notifications: { taskIds: [created.taskId] } }), async (stream) => {
      const note = await stream.nextMessage(isTaskNote(created.taskId, 'input_required'));
      const [key, request] = Object.entries(note.params.inputRequests as Record<string, Json>)[0] as [string, Json];
      expect(request.method).toBe('elicitation/create');
      await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } });
      const done = await stream.nextMessage(isTaskNote(created.taskId, 'completed'));
      expect(textOf(done.params.result)).toBe('Deleted pushed.txt');
    });
  });

  it('pushes a cancel', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    await withStream(await c.listen({ notifications: { taskIds: [created.taskId] } }), async (stream) => {
      await stream.nextMessage(isTaskNote(created.taskId, 'working'));
      await c.cancelTask(created.taskId);
      await stream.nextMessage(isTaskNote(created.taskId, 'cancelled'));
    });
  });

  it('sends keep-alive comment lines during quiet periods', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    await withStream(await c.listen({ notifications: { taskIds: [created.taskId] } }), async (stream) => {
      const seen: string[] = [];
      for (let i = 0; i < 10 && seen.length < 2; i++) {
        const event = await stream.next(3_000);
        if (event?.kind === 'comment') seen.push(event.text);
      }
      expect(seen.length).toBe(2);
    });
    await c.cancelTask(created.taskId);
  });

  it('an ack with no accepted ids when every id is unknown', async () => {
    await withStream(await client().listen({ notifications: { taskIds: [UNKNOWN_ID] } }, { id: 'L-empty' }), async (stream) => {
      expect(stream.status).toBe(200);
      const ack = await stream.nextMessage();
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params.notifications.taskIds).toEqual([]);
      expect(ack.params._meta[META.subscriptionId]).toBe('L-empty');
    });
  });

  it('with taskIds but without the extension declared is HTTP 400 -32021', async () => {
    const stream = await client().listen({ notifications: { taskIds: [UNKNOWN_ID] } }, { tasks: false });
    expect(stream.status).toBe(400);
    const body = await stream.json();
    expect(body.error.code).toBe(-32021);
    expect(body.error.data).toEqual({ requiredCapabilities: TASKS_CAPABILITY });
  });

  it('the extension is checked before the params: malformed taskIds without the extension is -32021 (step 7 before 8)', async () => {
    const stream = await client().listen({ notifications: { taskIds: 'not-a-list' } }, { tasks: false });
    expect(stream.status).toBe(400);
    expect((await stream.json()).error.code).toBe(-32021);
  });

  it('malformed taskIds with the extension is -32602', async () => {
    const stream = await client().listen({ notifications: { taskIds: 'not-a-list' } });
    expect((await stream.json()).error.code).toBe(-32602);
  });

  it('a listen without taskIds needs no extension', async () => {
    const stream = await client().listen({ notifications: { toolsListChanged: true } }, { tasks: false, id: 'L-plain' });
    try {
      expect(stream.status).toBe(200);
      const ack = await stream.nextMessage();
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params._meta[META.subscriptionId]).toBe('L-plain');
    } finally {
      stream.close();
    }
  });

  it('with more than 100 taskIds is -32602', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `${UNKNOWN_ID.slice(0, 19)}${String(i).padStart(3, '0')}`);
    const stream = await client().listen({ notifications: { taskIds: ids } });
    expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await stream.json()).error.code).toBe(-32602);
  });

  it('exactly 100 taskIds are accepted', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `${UNKNOWN_ID.slice(0, 19)}${String(i).padStart(3, '0')}`);
    await withStream(await client().listen({ notifications: { taskIds: ids } }), async (stream) => {
      expect(stream.status).toBe(200);
      expect((await stream.nextMessage()).params.notifications.taskIds).toEqual([]);
    });
  });
});
