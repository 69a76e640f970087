import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newOpaqueId, newTaskId } from '../../src/core/ids.js';
import type {
  RequestCancel,
  SessionRecord,
  SessionStore,
  StreamMeta,
  TaskPageEntry,
} from '../../src/session/session-store.js';

/** What the contract needs from a backend, fresh for every test. */
export interface SessionBackend {
  /** A store over this backend's data: a new replica where the backend is shared. */
  open(options?: { maxEvents?: number }): SessionStore;
  /** How many things (keys, buckets) the backend still holds, to prove that nothing is left behind. */
  residue(): Promise<number>;
}

const WAIT = { timeout: 5_000, interval: 20 };
const MINUTE = 60_000;
const GET: StreamMeta = { kind: 'get' };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function newSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionId: newOpaqueId(),
    principal: 'alice',
    protocolVersion: '2025-11-25',
    clientInfo: { name: 'example-client', version: '0.9.0' },
    clientCapabilities: { elicitation: { form: {}, url: {} }, sampling: {} },
    upstreamSessionId: 'upstream-1',
    usesTasksCreate: false,
    createdAt: Date.now(),
    ...overrides,
  };
}

/** Newest first, ties by task id descending in bytes: the order `tasks/list` promises. */
function newestFirst(a: TaskPageEntry, b: TaskPageEntry): number {
  return b.createdAt - a.createdAt || Buffer.compare(Buffer.from(b.taskId), Buffer.from(a.taskId));
}

function seqOf(eventId: string): number {
  return Number(eventId.slice(eventId.lastIndexOf('_') + 1));
}

export function describeSessionStoreContract(
  name: string,
  backendFor: () => SessionBackend | Promise<SessionBackend>,
): void {
  describe(`${name} (SessionStore contract)`, () => {
    let backend: SessionBackend;
    let store: SessionStore;
    const opened = new Set<SessionStore>();

    function replica(options?: { maxEvents?: number }): SessionStore {
      const opening = backend.open(options);
      opened.add(opening);
      return opening;
    }

    /** A live session, created through `store`. */
    async function session(overrides: Partial<SessionRecord> = {}): Promise<SessionRecord> {
      const record = newSession(overrides);
      await store.create(record, MINUTE);
      return record;
    }

    beforeEach(async () => {
      backend = await backendFor();
      store = replica();
    });

    afterEach(async () => {
      await Promise.all([...opened].map((each) => each.close()));
      opened.clear();
    });

    describe('sessions', () => {
      it('creates a session that every replica reads back as it was written', async () => {
        const record = await session();
        expect(await store.get(record.sessionId, MINUTE)).toEqual(record);
        expect(await replica().get(record.sessionId, MINUTE)).toEqual(record);
      });

      it('leaves optional fields absent when the caller left them out', async () => {
        const record = newSession({ clientInfo: undefined, upstreamSessionId: undefined, usesTasksCreate: undefined });
        await store.create(record, MINUTE);
        const read = await replica().get(record.sessionId, MINUTE);
        for (const field of ['clientInfo', 'upstreamSessionId', 'usesTasksCreate']) expect(read).not.toHaveProperty(field);
        expect(read).toEqual({
          sessionId: record.sessionId,
          principal: 'alice',
          protocolVersion: '2025-11-25',
          clientCapabilities: record.clientCapabilities,
          createdAt: record.createdAt,
        });
      });

      it('round-trips capabilities byte for byte', async () => {
        const clientCapabilities = { empty: {}, list: [], nested: [[{}]], text: 'héllo 🚀 "q" \\', big: 2 ** 60 };
        const record = await session({ clientCapabilities });
        const read = await replica().get(record.sessionId, MINUTE);
        expect(JSON.stringify(read?.clientCapabilities)).toBe(JSON.stringify(clientCapabilities));
      });

      it('hands out copies: changing a returned record or the input changes nothing stored', async () => {
        const record = await session();
        (record.clientCapabilities as Record<string, unknown>).changed = true;
        const read = await store.get(record.sessionId, MINUTE);
        read!.principal = 'mallory';
        (read!.clientCapabilities as Record<string, unknown>).changedToo = true;
        expect(await store.get(record.sessionId, MINUTE)).toMatchObject({
          principal: 'alice',
          clientCapabilities: { elicitation: { form: {}, url: {} }, sampling: {} },
        });
        expect((await store.get(record.sessionId, MINUTE))?.clientCapabilities).not.toHaveProperty('changed');
      });

      it('reads an unknown session as undefined', async () => {
        expect(await store.get(newOpaqueId(), MINUTE)).toBeUndefined();
        expect(await backend.residue()).toBe(0);
      });

      it('refuses a session id that is already in use', async () => {
        const record = await session();
        await expect(replica().create({ ...record, principal: 'mallory' }, MINUTE)).rejects.toThrow(/already exists/);
        expect((await store.get(record.sessionId, MINUTE))?.principal).toBe('alice');
      });

      it('updates the upstream session and the dialect flag, and clears a field given as undefined', async () => {
        const record = await session({ upstreamSessionId: undefined, usesTasksCreate: undefined });
        await replica().update(record.sessionId, { upstreamSessionId: 'upstream-2' });
        expect(await store.get(record.sessionId, MINUTE)).toEqual({ ...record, upstreamSessionId: 'upstream-2' });
        await replica().update(record.sessionId, { usesTasksCreate: true });
        expect(await store.get(record.sessionId, MINUTE)).toEqual({
          ...record,
          upstreamSessionId: 'upstream-2',
          usesTasksCreate: true,
        });
        await store.update(record.sessionId, { upstreamSessionId: undefined, usesTasksCreate: false });
        const read = await replica().get(record.sessionId, MINUTE);
        expect(read).not.toHaveProperty('upstreamSessionId');
        expect(read).toEqual({ ...record, usesTasksCreate: false });
        await store.update(record.sessionId, {});
        expect(await store.get(record.sessionId, MINUTE)).toEqual(read);
      });

      it('never brings a session back by updating it', async () => {
        await store.update(newOpaqueId(), { upstreamSessionId: 'upstream-2', usesTasksCreate: true });
        const record = await session();
        await store.delete(record.sessionId);
        await store.update(record.sessionId, { usesTasksCreate: true });
        expect(await store.get(record.sessionId, MINUTE)).toBeUndefined();
        expect(await backend.residue()).toBe(0);
      });

      it('deletes a session once: true when it existed, false after', async () => {
        const record = await session();
        expect(await replica().delete(record.sessionId)).toBe(true);
        expect(await store.get(record.sessionId, MINUTE)).toBeUndefined();
        expect(await store.delete(record.sessionId)).toBe(false);
        expect(await store.delete(newOpaqueId())).toBe(false);
      });

      it('expires a session after its idle TTL, leaving nothing behind', async () => {
        const record = newSession();
        await store.create(record, 200);
        await sleep(400);
        expect(await replica().get(record.sessionId, 200)).toBeUndefined();
        expect(await store.delete(record.sessionId)).toBe(false);
        await vi.waitFor(async () => expect(await backend.residue()).toBe(0), WAIT);
      });

      it('refreshes the idle TTL on every get', async () => {
        const record = newSession();
        const ttl = 1_000;
        await store.create(record, ttl);
        await sleep(600);
        expect(await replica().get(record.sessionId, ttl)).toBeDefined();
        await sleep(600); // past the first deadline, well within the refreshed one
        expect(await store.get(record.sessionId, ttl)).toBeDefined();
        await sleep(ttl + 300);
        expect(await store.get(record.sessionId, ttl)).toBeUndefined();
      });

      it('lets a new session reuse the id of a deleted one, with nothing of the old one', async () => {
        const record = await session();
        await store.addTask(record.sessionId, { taskId: newTaskId(), createdAt: Date.now() }, MINUTE);
        await store.watchTask(record.sessionId, newTaskId(), MINUTE);
        await store.delete(record.sessionId);
        await store.create({ ...record, principal: 'bob' }, MINUTE);
        expect((await store.get(record.sessionId, MINUTE))?.principal).toBe('bob');
        expect(await store.listTasks(record.sessionId, undefined, 100)).toEqual([]);
        expect(await store.watchedTasks(record.sessionId)).toEqual([]);
      });

      it('rejects a TTL that is not a positive number of ms', async () => {
        const record = newSession();
        for (const ttl of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
          await expect(store.create(record, ttl)).rejects.toThrow(RangeError);
        }
        await expect(store.addTask(record.sessionId, { taskId: 't', createdAt: Date.now() }, 0)).rejects.toThrow(
          RangeError,
        );
        expect(await backend.residue()).toBe(0);
      });
    });

    describe('tasks index', () => {
      it('lists the tasks of this session only, newest first', async () => {
        const { sessionId } = await session();
        const other = await session();
        const now = Date.now();
        const entries = [3, 1, 4, 0, 2].map((age) => ({ taskId: newTaskId(), createdAt: now - age * 1_000 }));
        for (const entry of entries) await replica().addTask(sessionId, entry, MINUTE);
        await store.addTask(other.sessionId, { taskId: newTaskId(), createdAt: now }, MINUTE);
        expect(await replica().listTasks(sessionId, undefined, 100)).toEqual([...entries].sort(newestFirst));
        expect(await store.listTasks(newOpaqueId(), undefined, 100)).toEqual([]);
        expect(await store.listTasks(sessionId, undefined, 0)).toEqual([]);
      });

      it('indexes a task once, however often it is added', async () => {
        const { sessionId } = await session();
        const entry = { taskId: newTaskId(), createdAt: Date.now() };
        await store.addTask(sessionId, entry, MINUTE);
        await replica().addTask(sessionId, entry, MINUTE);
        expect(await store.listTasks(sessionId, undefined, 100)).toEqual([entry]);
      });

      it('pages 250 entries 100 at a time, ties within a millisecond included, without duplicates or gaps', async () => {
        const { sessionId } = await session();
        const base = Date.now();
        // Seven entries share each millisecond; ids are random, so ties are ordered by id alone.
        const entries = Array.from({ length: 250 }, (_, i) => ({ taskId: newTaskId(), createdAt: base - Math.floor(i / 7) }));
        const shuffled = [...entries].sort(() => Math.random() - 0.5);
        const other = replica();
        await Promise.all(shuffled.map((entry, i) => (i % 2 ? store : other).addTask(sessionId, entry, MINUTE)));
        const pages: TaskPageEntry[][] = [];
        let after: TaskPageEntry | undefined;
        for (;;) {
          const page = await replica().listTasks(sessionId, after, 100);
          pages.push(page);
          if (page.length < 100) break;
          after = page.at(-1);
        }
        expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
        const listed = pages.flat();
        expect(new Set(listed.map((entry) => entry.taskId)).size).toBe(250);
        expect(listed).toEqual([...entries].sort(newestFirst));
        expect(await store.listTasks(sessionId, listed.at(-1), 100)).toEqual([]);
      });

      it('orders same-millisecond ties by task id bytes, descending', async () => {
        const { sessionId } = await session();
        const at = Date.now();
        const ids = ['B', 'a', '~', 'a-', 'A_', 'Z9', '0'];
        for (const taskId of ids) await store.addTask(sessionId, { taskId, createdAt: at }, MINUTE);
        const listed = await store.listTasks(sessionId, undefined, 100);
        expect(listed.map((entry) => entry.taskId)).toEqual(['~', 'a-', 'a', 'Z9', 'B', 'A_', '0']);
      });

      it('continues strictly after a cursor entry that is no longer indexed', async () => {
        const { sessionId } = await session();
        const at = Date.now();
        for (const taskId of ['a', 'c', 'e']) await store.addTask(sessionId, { taskId, createdAt: at }, MINUTE);
        await store.addTask(sessionId, { taskId: 'z', createdAt: at - 1 }, MINUTE);
        await store.addTask(sessionId, { taskId: 'y', createdAt: at - 2 }, MINUTE);
        const page = await replica().listTasks(sessionId, { taskId: 'd', createdAt: at }, 3);
        expect(page).toEqual([
          { taskId: 'c', createdAt: at },
          { taskId: 'a', createdAt: at },
          { taskId: 'z', createdAt: at - 1 },
        ]);
        expect(await store.listTasks(sessionId, { taskId: 'b', createdAt: at }, 1)).toEqual([{ taskId: 'a', createdAt: at }]);
        expect(await store.listTasks(sessionId, { taskId: 'q', createdAt: at - 1 }, 10)).toEqual([
          { taskId: 'y', createdAt: at - 2 },
        ]);
        expect(await store.listTasks(sessionId, { taskId: 'x', createdAt: at + 5 }, 2)).toEqual([
          { taskId: 'e', createdAt: at },
          { taskId: 'c', createdAt: at },
        ]);
      });

      it('drops entries older than their retention', async () => {
        const { sessionId } = await session();
        const now = Date.now();
        const kept = { taskId: newTaskId(), createdAt: now - 2 };
        const stale = { taskId: newTaskId(), createdAt: now - 10_000 };
        const fleeting = { taskId: newTaskId(), createdAt: now - 1 };
        await store.addTask(sessionId, kept, MINUTE);
        await store.addTask(sessionId, stale, 5_000);
        await store.addTask(sessionId, fleeting, 300);
        expect(await replica().listTasks(sessionId, undefined, 100)).toEqual([fleeting, kept]);
        await vi.waitFor(async () => expect(await store.listTasks(sessionId, undefined, 100)).toEqual([kept]), WAIT);
        // A cursor at a dropped entry still finds its place.
        expect(await store.listTasks(sessionId, fleeting, 100)).toEqual([kept]);
      });
    });

    describe('watched tasks', () => {
      it('keeps the set of watched tasks, each once', async () => {
        const { sessionId } = await session();
        const [a, b] = [newTaskId(), newTaskId()];
        await store.watchTask(sessionId, a, MINUTE);
        await replica().watchTask(sessionId, b, MINUTE);
        await replica().watchTask(sessionId, a, MINUTE);
        expect((await replica().watchedTasks(sessionId)).sort()).toEqual([a, b].sort());
        expect(await store.watchedTasks(newOpaqueId())).toEqual([]);
      });

      it('stops watching a task once its retention passes, unless it was watched again', async () => {
        const { sessionId } = await session();
        const [fleeting, renewed, kept] = [newTaskId(), newTaskId(), newTaskId()];
        await store.watchTask(sessionId, fleeting, 300);
        await store.watchTask(sessionId, renewed, 300);
        await store.watchTask(sessionId, kept, MINUTE);
        await store.watchTask(sessionId, renewed, MINUTE);
        // A shorter watch never cuts a longer one short.
        await store.watchTask(sessionId, kept, 1);
        expect((await store.watchedTasks(sessionId)).sort()).toEqual([fleeting, renewed, kept].sort());
        await vi.waitFor(async () => expect((await store.watchedTasks(sessionId)).sort()).toEqual([renewed, kept].sort()), WAIT);
      });
    });

    describe('streams', () => {
      it('gives event ids unique across the streams of a session, each naming its stream, increasing', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, MINUTE);
        await replica().openStream(sessionId, 'r1', { kind: 'result', taskId: 't1', requestId: 7 }, MINUTE);
        const ids: string[] = [];
        for (let i = 0; i < 10; i++) {
          ids.push(await store.appendEvent(sessionId, 'g1', `g${i}`));
          ids.push(await replica().appendEvent(sessionId, 'r1', `r${i}`));
        }
        expect(new Set(ids).size).toBe(20);
        ids.forEach((id, i) => expect(id).toMatch(i % 2 ? /^r1_[1-9][0-9]*$/ : /^g1_[1-9][0-9]*$/));
        const seqs = ids.map(seqOf);
        for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
        // Another session counts on its own.
        const other = await session();
        await store.openStream(other.sessionId, 'g1', GET, MINUTE);
        expect(seqOf(await store.appendEvent(other.sessionId, 'g1', ''))).toBeLessThan(seqs.at(-1)!);
      });

      it('gives unique ids to events appended concurrently from several replicas', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, MINUTE);
        const others = [replica(), replica()];
        const ids = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (others[i % 3] ?? store).appendEvent(sessionId, 'g1', `e${i}`)),
        );
        expect(new Set(ids).size).toBe(40);
        const first = await store.appendEvent(sessionId, 'g1', 'last');
        const log = await store.eventsAfter(sessionId, `g1_${Math.min(...ids.map(seqOf))}`);
        expect(log?.events).toHaveLength(40);
        expect(log?.events.at(-1)?.eventId).toBe(first);
      });

      it("replays exactly the later events of the event's own stream, with its meta", async () => {
        const { sessionId } = await session();
        const result: StreamMeta = { kind: 'result', taskId: newTaskId(), requestId: 'req-1' };
        await store.openStream(sessionId, 'g1', GET, MINUTE);
        await store.openStream(sessionId, 'r1', result, MINUTE);
        const g: string[] = [];
        const r: string[] = [];
        const data = (i: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'n', params: { i, text: 'é 🚀 "q"\n' } });
        g.push(await store.appendEvent(sessionId, 'g1', ''));
        r.push(await store.appendEvent(sessionId, 'r1', ''));
        for (let i = 1; i <= 6; i++) {
          g.push(await store.appendEvent(sessionId, 'g1', data(i)));
          r.push(await store.appendEvent(sessionId, 'r1', data(100 + i)));
        }
        const other = replica();
        expect(await other.eventsAfter(sessionId, r[2]!)).toEqual({
          streamId: 'r1',
          meta: result,
          events: [3, 4, 5, 6].map((i) => ({ eventId: r[i], data: data(100 + i) })),
        });
        expect(await other.eventsAfter(sessionId, g[0]!)).toEqual({
          streamId: 'g1',
          meta: GET,
          events: [1, 2, 3, 4, 5, 6].map((i) => ({ eventId: g[i], data: data(i) })),
        });
        expect(await other.eventsAfter(sessionId, g.at(-1)!)).toEqual({ streamId: 'g1', meta: GET, events: [] });
      });

      it('keeps a requestId of either type', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'r1', { kind: 'result', taskId: 't', requestId: 0 }, MINUTE);
        await store.openStream(sessionId, 'r2', { kind: 'result', taskId: 't', requestId: '0' }, MINUTE);
        const one = await store.appendEvent(sessionId, 'r1', '');
        const two = await store.appendEvent(sessionId, 'r2', '');
        expect((await replica().eventsAfter(sessionId, one))?.meta).toEqual({ kind: 'result', taskId: 't', requestId: 0 });
        expect((await replica().eventsAfter(sessionId, two))?.meta).toEqual({ kind: 'result', taskId: 't', requestId: '0' });
      });

      it('reads an unknown, malformed or foreign event id as undefined', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, MINUTE);
        await store.openStream(sessionId, 'r1', GET, MINUTE);
        const g1 = await store.appendEvent(sessionId, 'g1', '');
        const r1 = await store.appendEvent(sessionId, 'r1', '');
        await store.appendEvent(sessionId, 'g1', 'x');
        const other = await session();
        const unknown = [
          '',
          '_',
          'g1',
          'g1_',
          '_1',
          'g1_abc',
          'g1_0',
          'g1_01',
          'g1_-1',
          'g1_1.5',
          'g1_1e3',
          'g1_99999999999999999999',
          `g1_${seqOf(r1) + 1000}`, // never issued
          `g1_${seqOf(r1)}`, // r1's event, not g1's
          `r1_${seqOf(g1)}`, // g1's event, not r1's
          `nope_${seqOf(g1)}`, // no such stream
          `{s:${sessionId}}_1`,
        ];
        for (const eventId of unknown) expect(await store.eventsAfter(sessionId, eventId), eventId).toBeUndefined();
        expect(await store.eventsAfter(other.sessionId, g1)).toBeUndefined();
        expect(await store.eventsAfter(newOpaqueId(), g1)).toBeUndefined();
        expect((await store.eventsAfter(sessionId, g1))?.events).toHaveLength(1);
      });

      it('accepts stream ids with underscores, since the seq follows the last one', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'a_b', GET, MINUTE);
        const first = await store.appendEvent(sessionId, 'a_b', '');
        const second = await store.appendEvent(sessionId, 'a_b', 'x');
        expect(await replica().eventsAfter(sessionId, first)).toEqual({
          streamId: 'a_b',
          meta: GET,
          events: [{ eventId: second, data: 'x' }],
        });
      });

      it('keeps the newest maxEvents events of each stream', async () => {
        const { sessionId } = await session();
        const small = replica({ maxEvents: 5 });
        await small.openStream(sessionId, 'g1', GET, MINUTE);
        await small.openStream(sessionId, 'g2', GET, MINUTE);
        const ids: string[] = [];
        for (let i = 0; i < 12; i++) {
          ids.push(await small.appendEvent(sessionId, 'g1', `e${i}`));
          await small.appendEvent(sessionId, 'g2', `other${i}`);
        }
        // The client's event was trimmed away: what is left is all newer, so all of it is replayed.
        const fromStart = await small.eventsAfter(sessionId, ids[0]!);
        expect(fromStart?.events.map((event) => event.data)).toEqual(['e7', 'e8', 'e9', 'e10', 'e11']);
        expect((await small.eventsAfter(sessionId, ids[8]!))?.events.map((event) => event.eventId)).toEqual(ids.slice(9));
      });

      it('forgets a stream once its retention passes without an append', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, 300);
        await store.openStream(sessionId, 'g2', GET, MINUTE);
        const old = await store.appendEvent(sessionId, 'g1', '');
        await store.appendEvent(sessionId, 'g2', '');
        await vi.waitFor(async () => expect(await store.eventsAfter(sessionId, old)).toBeUndefined(), WAIT);
        // An event of a stream that is not open still gets a fresh id, but is not kept.
        const late = await replica().appendEvent(sessionId, 'g1', 'late');
        expect(late).toMatch(/^g1_/);
        expect(seqOf(late)).toBeGreaterThan(seqOf(old));
        expect(await store.eventsAfter(sessionId, late)).toBeUndefined();
        const never = await store.appendEvent(sessionId, 'never-opened', 'x');
        expect(seqOf(never)).toBeGreaterThan(seqOf(late));
        expect(await store.eventsAfter(sessionId, never)).toBeUndefined();
      });

      it('keeps a stream that is in use: every append renews its retention', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, 1_000);
        const first = await store.appendEvent(sessionId, 'g1', '');
        await sleep(600);
        const second = await store.appendEvent(sessionId, 'g1', 'x');
        await sleep(600); // past the opening deadline, well within the renewed one
        expect((await store.eventsAfter(sessionId, first))?.events).toEqual([{ eventId: second, data: 'x' }]);
      });

      it('reopens a stream under the same id, keeping its events', async () => {
        const { sessionId } = await session();
        await store.openStream(sessionId, 'g1', GET, MINUTE);
        const first = await store.appendEvent(sessionId, 'g1', '');
        await replica().openStream(sessionId, 'g1', GET, MINUTE);
        const second = await store.appendEvent(sessionId, 'g1', 'x');
        expect((await store.eventsAfter(sessionId, first))?.events).toEqual([{ eventId: second, data: 'x' }]);
      });
    });

    describe('result streams', () => {
      it('holds while any holder does, and releases each holder alone', async () => {
        const taskId = newTaskId();
        const other = replica();
        expect(await store.hasResultStream(taskId)).toBe(false);
        await store.holdResultStream(taskId, 'replica-a:r1', MINUTE);
        await other.holdResultStream(taskId, 'replica-b:r2', MINUTE);
        expect(await other.hasResultStream(taskId)).toBe(true);
        await other.releaseResultStream(taskId, 'replica-a:r1');
        expect(await store.hasResultStream(taskId)).toBe(true);
        await store.releaseResultStream(taskId, 'nobody');
        expect(await store.hasResultStream(taskId)).toBe(true);
        await store.releaseResultStream(taskId, 'replica-b:r2');
        expect(await other.hasResultStream(taskId)).toBe(false);
        await store.releaseResultStream(newTaskId(), 'nobody');
        expect(await backend.residue()).toBe(0);
      });

      it('lets a mark lapse after its TTL, while the other holder keeps the task held until released', async () => {
        const taskId = newTaskId();
        await store.holdResultStream(taskId, 'lapsing', 300);
        await replica().holdResultStream(taskId, 'renewed', 300);
        await replica().holdResultStream(taskId, 'renewed', MINUTE);
        await store.releaseResultStream(taskId, 'renewed');
        expect(await store.hasResultStream(taskId)).toBe(true);
        await vi.waitFor(async () => expect(await store.hasResultStream(taskId)).toBe(false), WAIT);
        await vi.waitFor(async () => expect(await backend.residue()).toBe(0), WAIT);
      });

      it('renews a mark by holding it again', async () => {
        const taskId = newTaskId();
        await store.holdResultStream(taskId, 'a', 1_000);
        await sleep(600);
        await store.holdResultStream(taskId, 'a', 1_000);
        await sleep(600); // past the first deadline, well within the renewed one
        expect(await replica().hasResultStream(taskId)).toBe(true);
        await vi.waitFor(async () => expect(await store.hasResultStream(taskId)).toBe(false), WAIT);
      });

      it('keeps the marks of different tasks apart', async () => {
        const [held, free] = [newTaskId(), newTaskId()];
        await store.holdResultStream(held, 'a', MINUTE);
        expect(await store.hasResultStream(free)).toBe(false);
      });
    });

    describe('push claims', () => {
      it('lets one open stream claim a push, and another only once that stream closed', async () => {
        const { sessionId } = await session();
        const other = replica();
        await store.keepStreamOpen(sessionId, 'g1', MINUTE);
        await other.keepStreamOpen(sessionId, 'r1', MINUTE);
        expect(await store.claimPush(sessionId, 'task:t:k1', 'g1', MINUTE)).toBe(true);
        expect(await other.claimPush(sessionId, 'task:t:k1', 'r1', MINUTE)).toBe(false);
        expect(await store.claimPush(sessionId, 'task:t:k1', 'g1', MINUTE)).toBe(true);
        expect(await other.claimPush(sessionId, 'task:t:k2', 'r1', MINUTE)).toBe(true);
        await store.closeStream(sessionId, 'g1');
        expect(await other.claimPush(sessionId, 'task:t:k1', 'r1', MINUTE)).toBe(true);
        expect(await store.claimPush(sessionId, 'task:t:k1', 'g2', MINUTE)).toBe(false);
      });

      it('releases the pushes of a stream whose mark lapsed (its replica died)', async () => {
        const { sessionId } = await session();
        await store.keepStreamOpen(sessionId, 'dead', 300);
        expect(await store.claimPush(sessionId, 'task:t:k', 'dead', MINUTE)).toBe(true);
        expect(await replica().claimPush(sessionId, 'task:t:k', 'g2', MINUTE)).toBe(false);
        await vi.waitFor(async () => expect(await replica().claimPush(sessionId, 'task:t:k', 'g2', MINUTE)).toBe(true), WAIT);
      });

      it('keeps the claims of different sessions apart', async () => {
        const [a, b] = [await session(), await session()];
        await store.keepStreamOpen(a.sessionId, 'g1', MINUTE);
        expect(await store.claimPush(a.sessionId, 'task:t:k', 'g1', MINUTE)).toBe(true);
        expect(await store.claimPush(b.sessionId, 'task:t:k', 'g9', MINUTE)).toBe(true);
      });
    });

    describe('everything of a session', () => {
      async function populate(sessionId: string, retentionMs: number, on: SessionStore = store): Promise<string> {
        await on.keepStreamOpen(sessionId, 'g1', retentionMs);
        await on.claimPush(sessionId, 'task:t:k', 'g1', retentionMs);
        await on.addTask(sessionId, { taskId: newTaskId(), createdAt: Date.now() }, retentionMs);
        await on.watchTask(sessionId, newTaskId(), retentionMs);
        await on.openStream(sessionId, 'g1', GET, retentionMs);
        await on.openStream(sessionId, 'r1', { kind: 'result', taskId: 't', requestId: 1 }, retentionMs);
        await on.appendEvent(sessionId, 'g1', '');
        return on.appendEvent(sessionId, 'r1', '');
      }

      it('removes it all on delete', async () => {
        const { sessionId } = await session();
        const eventId = await populate(sessionId, MINUTE, replica());
        const survivor = await session();
        await populate(survivor.sessionId, MINUTE);
        expect(await replica().delete(sessionId)).toBe(true);
        expect(await store.get(sessionId, MINUTE)).toBeUndefined();
        expect(await store.listTasks(sessionId, undefined, 100)).toEqual([]);
        expect(await store.watchedTasks(sessionId)).toEqual([]);
        expect(await store.eventsAfter(sessionId, eventId)).toBeUndefined();
        expect(await store.delete(survivor.sessionId)).toBe(true);
        expect(await backend.residue()).toBe(0);
      });

      it('removes what a session left after it expired, on delete', async () => {
        const record = newSession();
        await store.create(record, 100);
        await populate(record.sessionId, MINUTE);
        await sleep(200);
        expect(await store.delete(record.sessionId)).toBe(false);
        expect(await backend.residue()).toBe(0);
      });

      it('leaves nothing behind once every TTL and retention has passed and a sweep claimed the lapsed session', async () => {
        const record = newSession();
        await store.create(record, 300);
        await populate(record.sessionId, 300);
        await store.holdResultStream(newTaskId(), 'a', 300);
        const lapsed: string[] = [];
        await vi.waitFor(async () => {
          lapsed.push(...(await store.sweepDue(100)).lapsed.map((due) => due.sessionId));
          expect(await backend.residue()).toBe(0);
        }, WAIT);
        expect(lapsed).toEqual([record.sessionId]);
        expect(await store.get(record.sessionId, 300)).toBeUndefined();
      });

      it('shows a second store on the same backend the same state', async () => {
        const record = await session();
        const eventId = await populate(record.sessionId, MINUTE);
        const second = replica();
        expect(await second.get(record.sessionId, MINUTE)).toEqual(record);
        expect(await second.listTasks(record.sessionId, undefined, 100)).toHaveLength(1);
        expect(await second.watchedTasks(record.sessionId)).toHaveLength(1);
        expect((await second.eventsAfter(record.sessionId, eventId))?.meta).toEqual({
          kind: 'result',
          taskId: 't',
          requestId: 1,
        });
        const next = await second.appendEvent(record.sessionId, 'r1', 'x');
        expect((await store.eventsAfter(record.sessionId, eventId))?.events).toEqual([{ eventId: next, data: 'x' }]);
      });
    });

    describe('request cancels', () => {
      /** A replica listening to the cancels, ready to hear every replica's. */
      async function listening(each: SessionStore): Promise<{ heard: RequestCancel[]; stop: () => void }> {
        const heard: RequestCancel[] = [];
        const stop = each.onRequestCancel((cancel) => heard.push(cancel));
        await each.requestCancelsReady();
        return { heard, stop };
      }

      it('tells every listening replica, the publishing one included, with request ids of either type', async () => {
        const other = replica();
        const [here, there] = await Promise.all([listening(store), listening(other)]);
        const cancels: RequestCancel[] = [
          { sessionId: 's-1', requestId: 'call-7' },
          { sessionId: 's-1', requestId: 7 },
        ];
        for (const cancel of cancels) await store.publishCancel(cancel);
        await vi.waitFor(() => expect(there.heard).toEqual(cancels), WAIT);
        await vi.waitFor(() => expect(here.heard).toEqual(cancels), WAIT);
      });

      it('tells a listener nothing once it stopped listening', async () => {
        const [stopped, still] = await Promise.all([listening(replica()), listening(replica())]);
        stopped.stop();
        await store.publishCancel({ sessionId: 's-2', requestId: 1 });
        await vi.waitFor(() => expect(still.heard).toHaveLength(1), WAIT);
        expect(stopped.heard).toEqual([]);
      });

      it('keeps nothing of a cancel, heard or not', async () => {
        await listening(store);
        await store.publishCancel({ sessionId: 's-3', requestId: 'x'.repeat(256) });
        await replica().publishCancel({ sessionId: 's-3', requestId: 3 });
        expect(await backend.residue()).toBe(0);
      });
    });

    describe('lapsed sessions (sweepDue)', () => {
      it('hands a lapsed session to exactly one of several replicas, with what its clean-up needs', async () => {
        const record = newSession({ upstreamSessionId: 'upstream-lapsed' });
        await store.create(record, 100);
        await sleep(150);
        const sweeps = await Promise.all([store, replica(), replica()].map((each) => each.sweepDue(100)));
        const lapsed = sweeps.flatMap((sweep) => sweep.lapsed);
        expect(lapsed).toEqual([{ sessionId: record.sessionId, principal: 'alice', upstreamSessionId: 'upstream-lapsed' }]);
        expect((await store.sweepDue(100)).lapsed).toEqual([]);
      });

      it('reschedules a session used after its first deadline, and never returns a deleted one', async () => {
        const used = newSession();
        const deleted = newSession();
        await store.create(used, 200);
        await store.create(deleted, 200);
        await sleep(120);
        await store.get(used.sessionId, 200);
        expect(await store.delete(deleted.sessionId)).toBe(true);
        await sleep(120);
        const sweep = await replica().sweepDue(100);
        expect(sweep.lapsed).toEqual([]);
        expect(sweep.extended).toEqual([expect.objectContaining({ sessionId: used.sessionId, principal: 'alice', dueAt: expect.any(Number) })]);
        expect(sweep.extended[0]!.dueAt).toBeGreaterThan(Date.now());
        await vi.waitFor(async () => expect((await store.sweepDue(100)).lapsed.map((due) => due.sessionId)).toEqual([used.sessionId]), WAIT);
      });
    });
  });
}
