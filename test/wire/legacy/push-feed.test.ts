import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeFanOut } from '../../../src/core/change-fan-out.js';
import type { TaskFeed } from '../../../src/core/task-change.js';
import { StreamBudget } from '../../../src/http/stream-budget.js';
import { RedisSessionStore } from '../../../src/session/redis-session-store.js';
import type { SessionRecord } from '../../../src/session/session-store.js';
import { RedisTaskStore } from '../../../src/store/redis/redis-store.js';
import { pushId } from '../../../src/wire/legacy/constants.js';
import { PushFeed, type FeedScope } from '../../../src/wire/legacy/push-feed.js';
import { SessionStream } from '../../../src/wire/legacy/session-stream.js';
import { countSubscriptions } from '../../support/counted-subscriptions.js';
import { SseStream } from '../../support/legacy-client.js';
import { newTask } from '../../support/new-task.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { pollUntil } from '../../support/sep2663-client.js';

const RETENTION_MS = 60_000;
const GET_STREAMS = 8;

/** The task feed the feeds follow: the store's reads and changes, as TaskService hands them on. */
function feedOf(inner: RedisTaskStore): TaskFeed {
  return {
    findTask: (principal, taskId) => inner.get(taskId, principal),
    loadTask: (taskId) => inner.load(taskId),
    subscribe: (listener) => inner.subscribe(listener),
  };
}

function session(sessionId: string): SessionRecord {
  return { sessionId, principal: 'alice', protocolVersion: '2025-11-25', clientCapabilities: {}, createdAt: Date.now() };
}

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

describe('PushFeed', () => {
  it('serves every open GET and tasks/result stream of the process from one store subscription', async () => {
    const tasks = new RedisTaskStore({ url: redis.url, prefix: 'feed' });
    const sessions = new RedisSessionStore({ url: redis.url, prefix: 'feed' });
    await tasks.subscriptionReady();
    const { source: store, live: subscriptions } = countSubscriptions(feedOf(tasks));
    const budget = new StreamBudget({ maxStreamBytes: 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 });
    let started = 0;
    let streamIds = 0;
    // A real HTTP server: GET /<session> is a session's GET stream, GET /<session>/<task> a tasks/result stream.
    const server: Server = createServer((req, res) => {
      const [sessionId, taskId] = (req.url ?? '/').slice(1).split('/') as [string, string | undefined];
      const scope: FeedScope = taskId ? { kind: 'result', taskId } : { kind: 'get' };
      // What the HTTP edge does before a stream runs (src/http/sse.ts).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const stream = new SessionStream(budget.track(res), sessions, sessionId, `s${++streamIds}`);
      void (async () => {
        await stream.open(taskId ? { kind: 'result', taskId, requestId: 1 } : { kind: 'get' }, RETENTION_MS);
        const feed = new PushFeed({ tasks: store, sessions, session: session(sessionId), stream, scope, statusNotifications: true, retentionMs: RETENTION_MS });
        res.once('close', () => feed.stop());
        await feed.start();
        started++;
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ids = Array.from({ length: GET_STREAMS }, (_, i) => `sess${i}`);
    try {
      for (const id of ids) await sessions.create(session(id), RETENTION_MS);
      const task = await tasks.create(newTask());
      const open = [
        ...ids.map((id) => new SseStream(`${url}/${id}`, {}, 'GET')),
        new SseStream(`${url}/sess0/${task.taskId}`, {}, 'GET'),
        new SseStream(`${url}/sess1/${task.taskId}`, {}, 'GET'),
      ];
      await pollUntil(async () => started, (n) => n === open.length);
      expect(subscriptions()).toBe(1);
      expect(changeFanOut(store).stats()).toEqual({ subscribed: true, tasks: 1, sessions: GET_STREAMS });

      // A push for session 3's task reaches its GET stream through the shared subscription.
      const pushed = await tasks.create(newTask());
      await tasks.touchSession(pushed.taskId, 'alice', 'sess3', Date.now());
      await tasks.requestInput(pushed.taskId, 'k1', { method: 'elicitation/create', params: { message: 'ok?' } }, Date.now());
      const push = await open[3]!.next((e) => e.message?.id === pushId(pushed.taskId, 'k1'));
      expect(push.message?.method).toBe('elicitation/create');
      // The result streams of the other task hear its change too.
      await tasks.requestInput(task.taskId, 'k2', { method: 'elicitation/create', params: { message: 'and?' } }, Date.now());
      const [first, second] = await Promise.all(
        [open[GET_STREAMS]!, open[GET_STREAMS + 1]!].map((stream) => stream.next((e) => e.message?.method === 'notifications/tasks/status', 5_000).then(() => stream)),
      );
      expect([first, second]).toHaveLength(2);

      for (const stream of open) stream.close();
      await pollUntil(async () => subscriptions(), (n) => n === 0);
      expect(changeFanOut(store).stats()).toEqual({ subscribed: false, tasks: 0, sessions: 0 });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([tasks.close(), sessions.close()]);
    }
  });
});
