import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamSlot } from '../../../src/core/limits.js';
import type { TaskFeed } from '../../../src/core/task-change.js';
import { InternalError, ShimError } from '../../../src/core/errors.js';
import { OpenStreams } from '../../../src/http/open-streams.js';
import { taskKey } from '../../../src/store/redis/keys.js';
import { RedisTaskStore } from '../../../src/store/redis/redis-store.js';
import type { TaskStore } from '../../../src/store/task-store.js';
import { errorResponse } from '../../../src/wire/jsonrpc/message.js';
import { json, type Reply } from '../../../src/wire/reply.js';
import { ListenHub, type ListenHubOptions } from '../../../src/wire/sep2663/listen-hub.js';
import { listen } from '../../../src/wire/sep2663/listen.js';
import { writeReply } from '../../../src/http/write-reply.js';
import { countSubscriptions } from '../../support/counted-subscriptions.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { ListenStream, pollUntil, type Json } from '../../support/sep2663-client.js';
import { newTask } from '../../support/new-task.js';

const ALICE = 'alice';

/** What the hub reads (TaskService's part of it), over a real store, counting live subscriptions and reads. */
interface CountedFeed {
  feed: TaskFeed;
  subscriptions: () => number;
  loads: () => number;
}

function counted(inner: TaskStore): CountedFeed {
  let loads = 0;
  const { source: feed, live } = countSubscriptions<TaskFeed>({
    subscribe: (listener) => inner.subscribe(listener),
    findTask: (principal, taskId) => inner.get(taskId, principal),
    loadTask: (taskId) => {
      loads++;
      return inner.load(taskId);
    },
  });
  return { feed, subscriptions: live, loads: () => loads };
}

const noSlot: StreamSlot = { renew: () => undefined, release: () => undefined };

/** The handler's answer for a failure, as Sep2663Handler renders one. */
const fail = (id: string) => (err: unknown): Reply => json(200, errorResponse(id, err instanceof ShimError ? err : new InternalError()));


let redis: RedisServer;
let admin: Redis;
let prefixes = 0;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});

afterAll(async () => {
  await admin?.quit();
  await redis?.stop();
});

/** A real HTTP server whose every POST is a listen of `alice` on the ids in its JSON body. */
async function listenServer(hubOptions: ListenHubOptions = {}, redisUrl = redis.url) {
  const prefix = `mts-hub-${++prefixes}`;
  const inner = new RedisTaskStore({ url: redisUrl, prefix });
  await inner.subscriptionReady();
  const store = counted(inner);
  const hub = new ListenHub(store.feed, hubOptions);
  const streams = new OpenStreams(undefined, 60_000);
  let closed = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const { id, taskIds } = JSON.parse(body) as { id: string; taskIds: string[] };
      void listen({ hub, principal: ALICE, id, taskIds, slot: noSlot, onClose: () => void closed++, fail: fail(id) }).then((reply) => writeReply(res, reply, streams));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const open = async (id: string, taskIds: string[]): Promise<ListenStream> => {
    const abort = new AbortController();
    const res = await fetch(url, { method: 'POST', body: JSON.stringify({ id, taskIds }), signal: abort.signal });
    return new ListenStream(res, abort, id);
  };
  const stop = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await inner.close();
  };
  return { prefix, url, inner, store, hub, streams, open, stop, closed: () => closed };
}

const isStatus = (taskId: string, status: string) => (m: Json): boolean =>
  m.method === 'notifications/tasks' && m.params.taskId === taskId && m.params.status === status;

describe('ListenHub', () => {
  it('serves every open stream from one store subscription and holds no watcher once they all close', async () => {
    const s = await listenServer();
    try {
      const a = await s.inner.create(newTask());
      const b = await s.inner.create(newTask());
      const listens = await Promise.all(Array.from({ length: 50 }, (_, i) => s.open(`L${i}`, i % 2 ? [a.taskId, b.taskId] : [a.taskId])));
      for (const stream of listens) await stream.nextMessage((m) => m.method === 'notifications/tasks');
      expect(s.hub.stats()).toEqual({ tasks: 2, watchers: 50, subscribed: true });
      expect(s.store.subscriptions()).toBe(1);
      expect(s.streams.size).toBe(50);

      for (const stream of listens) stream.close();
      await pollUntil(async () => s.closed(), (n) => n === 50);
      expect(s.hub.stats()).toEqual({ tasks: 0, watchers: 0, subscribed: false });
      expect(s.store.subscriptions()).toBe(0);
      expect(s.streams.size).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it('reads a changed task once for all of its 200 streams, and each gets the terminal notification once', async () => {
    const s = await listenServer({ sweepMs: 600_000 });
    try {
      const task = await s.inner.create(newTask());
      const listens = await Promise.all(Array.from({ length: 200 }, (_, i) => s.open(`F${i}`, [task.taskId])));
      for (const stream of listens) await stream.nextMessage(isStatus(task.taskId, 'working'));
      const before = s.store.loads();

      expect(await s.inner.finish(task.taskId, { status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } }, Date.now())).toBe(true);
      for (const stream of listens) {
        const note = await stream.nextMessage(isStatus(task.taskId, 'completed'));
        expect(note.params.result).toEqual({ resultType: 'complete', content: [{ type: 'text', text: 'done' }] });
      }
      await pollUntil(async () => s.hub.stats().tasks, (n) => n === 0);
      // The read the last registration asked for and the change's read coalesce: at most one in flight, one after it.
      expect(s.store.loads() - before).toBeLessThanOrEqual(2);
      for (const stream of listens) {
        const later = stream.drain().filter((e) => e.kind === 'message');
        expect(later).toEqual([]);
        stream.close();
      }
    } finally {
      await s.stop();
    }
  });

  it('delivers a change that was never published, on the next sweep', async () => {
    const s = await listenServer({ sweepMs: 200 });
    try {
      const task = await s.inner.create(newTask());
      const stream = await s.open('missed', [task.taskId]);
      await stream.nextMessage(isStatus(task.taskId, 'working'));
      const lastUpdatedAt = Date.now() + 1;
      // As if the publish was lost in a reconnect: the hash changes, no event is sent.
      await admin.hset(taskKey(s.prefix, task.taskId), 'status', 'failed', 'lastUpdatedAt', String(lastUpdatedAt), 'statusMessage', 'lost', 'error', JSON.stringify({ code: -32603, message: 'lost' }));
      const note = await stream.nextMessage(isStatus(task.taskId, 'failed'), 5_000);
      expect(note.params).toMatchObject({ statusMessage: 'lost', error: { code: -32603, message: 'lost' }, lastUpdatedAt: new Date(lastUpdatedAt).toISOString() });
      stream.close();
    } finally {
      await s.stop();
    }
  });

  it('never writes a task of another principal, even when an event names it', async () => {
    const s = await listenServer({ sweepMs: 200 });
    try {
      const mine = await s.inner.create(newTask());
      const theirs = await s.inner.create(newTask({ principal: 'bob' }));
      const stream = await s.open('mixed', [theirs.taskId, mine.taskId]);
      const ack = await stream.nextMessage();
      expect(ack.params.notifications.taskIds).toEqual([mine.taskId]);
      await s.inner.cancel(theirs.taskId, 'bob', 'bye', Date.now());
      await s.inner.cancel(mine.taskId, ALICE, 'mine ends', Date.now());
      await stream.nextMessage(isStatus(mine.taskId, 'cancelled'));
      const seen = [ack, ...stream.drain().flatMap((e) => (e.kind === 'message' ? [e.data] : []))];
      expect(seen.some((m) => m.params?.taskId === theirs.taskId)).toBe(false);
      expect(s.hub.stats().tasks).toBe(0);
      stream.close();
    } finally {
      await s.stop();
    }
  });

  it('answers a retryable -32603 instead of a stream when the store cannot read the snapshots', async () => {
    const own = await startRedis();
    const s = await listenServer({}, own.url);
    try {
      const task = await s.inner.create(newTask());
      await own.halt();
      const res = await fetch(s.url, { method: 'POST', body: JSON.stringify({ id: 'L-down', taskIds: [task.taskId] }) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: 'L-down',
        error: { code: -32603, message: 'Task store is unavailable, retry later', data: { retryable: true } },
      });
      await pollUntil(async () => s.closed(), (n) => n === 1);
      expect(s.hub.stats()).toEqual({ tasks: 0, watchers: 0, subscribed: false });
      expect(s.streams.size).toBe(0);
    } finally {
      await s.stop();
      await own.stop();
    }
  });
});
