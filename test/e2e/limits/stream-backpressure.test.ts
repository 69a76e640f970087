import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { buildRequest, pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const KIB = 1024;
const MAX_STREAM_BYTES = 256 * KIB;
/** Each task's result is about this long: a listen snapshot carries it whole. */
const RESULT_CHARS = 1_000_000;
const TASKS = 20;

const stack = useStack({
  stores: ['embedded'],
  env: {
    // Every slow_compute call becomes a task at once, whatever its length.
    SHIM_AUTO_WINDOW_MS: '0',
    SHIM_LISTEN_KEEPALIVE_MS: '300',
    SHIM_MAX_STREAM_BUFFER_BYTES: String(MAX_STREAM_BYTES),
  },
});

/** Completed tasks whose results are about 1 MB each. */
async function bigTasks(shim: ShimProcess, count: number): Promise<string[]> {
  const client = new Sep2663Client(shim.url);
  const label = 'x'.repeat(RESULT_CHARS);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await client.createTask('slow_compute', { seconds: 0, label })).taskId as string);
  for (const taskId of ids) await client.waitForStatus(taskId, 'completed');
  return ids;
}

/** A listen sent on a raw socket that never reads what comes back. */
function stalledListen(shim: ShimProcess, taskIds: string[]): Promise<Socket> {
  const { headers, body } = buildRequest('subscriptions/listen', { notifications: { taskIds } });
  return stalledRequest(shim, 'POST', headers, body);
}

/** A request sent on a raw socket that never reads the answer. */
async function stalledRequest(shim: ShimProcess, method: 'GET' | 'POST', headers: Record<string, string>, body?: unknown): Promise<Socket> {
  const text = body === undefined ? '' : JSON.stringify(body);
  const url = new URL(shim.url);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  const head = Object.entries({ ...headers, host: url.host, 'content-length': String(Buffer.byteLength(text)) })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.write(`${method} ${url.pathname} HTTP/1.1\r\n${head}\r\n\r\n${text}`);
  return socket;
}

/**
 * Reads what the socket still has and resolves, once the peer closed it (bounded), with the bytes
 * that reached the client: what the kernel took before the client stopped reading.
 */
function readToClose(socket: Socket, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.on('error', () => undefined);
    if (socket.destroyed) {
      resolve(socket.bytesRead);
      return;
    }
    const timer = setTimeout(() => reject(new Error(`the shim kept the stalled stream open for ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(socket.bytesRead);
    });
    socket.resume();
  });
}

interface StreamFigures {
  buffered: number;
  listens: number;
  gets: number;
  /** Streams the replica closed for their slow readers, so far. */
  cuts: number;
  /** New streams the replica refused for its unsent-bytes total, so far. */
  refusals: number;
}

async function figures(shim: ShimProcess): Promise<StreamFigures> {
  const text = await (await fetch(`${shim.baseUrl}/metrics`)).text();
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? NaN);
  return {
    buffered: value(/^mcp_shim_stream_buffered_bytes(?:\{[^}]*\})? (\d+)$/m),
    listens: value(/^mcp_shim_open_streams\{[^}]*kind="listen"[^}]*\} (\d+)$/m),
    gets: value(/^mcp_shim_open_streams\{[^}]*kind="legacy-get"[^}]*\} (\d+)$/m),
    cuts: value(/^mcp_shim_stream_cuts_total(?:\{[^}]*\})? (\d+)$/m),
    refusals: value(/^mcp_shim_stream_refusals_total(?:\{[^}]*\})? (\d+)$/m),
  };
}

/** Samples the figures until the replica has closed one more stream than `before`; returns every sample. */
async function untilCut(shim: ShimProcess, before: number): Promise<StreamFigures[]> {
  const seen: StreamFigures[] = [];
  await pollUntil(
    async () => {
      const now = await figures(shim);
      seen.push(now);
      return now;
    },
    (now) => now.cuts === before + 1,
    { timeoutMs: 15_000, intervalMs: 25 },
  );
  return seen;
}

describe('SSE streams of clients that do not read (backpressure, docs/security.md)', () => {
  let taskIds: string[] = [];
  beforeAll(async () => {
    taskIds = await bigTasks(stack.shim(), TASKS);
  }, 60_000);

  it('closes a listen whose client stops reading, with at most one frame and the per-stream bound unsent meanwhile', async () => {
    const shim = stack.shim();
    const before = (await figures(shim)).cuts;
    const socket = await stalledListen(shim, taskIds);
    const seen = await untilCut(shim, before);
    const mostBuffered = Math.max(...seen.map((each) => each.buffered));
    // One snapshot frame (about RESULT_CHARS) may be in flight; the 20 MB of snapshots never are.
    expect(mostBuffered).toBeLessThanOrEqual(MAX_STREAM_BYTES + RESULT_CHARS + 4 * KIB);
    expect(await figures(shim)).toMatchObject({ buffered: 0, listens: 0 });
    // What the kernel took before the client stopped reading arrives; the rest was never sent.
    const received = await readToClose(socket);
    expect(received).toBeLessThan((TASKS / 2) * RESULT_CHARS);
  });

  it('sends a client that reads every snapshot whole, one at a time, though each is larger than the per-stream bound', async () => {
    const listen = await new Sep2663Client(stack.shim().url).listen({ notifications: { taskIds } });
    expect(listen.status).toBe(200);
    const ack = await listen.nextMessage((m: Json) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack.params.notifications.taskIds).toHaveLength(TASKS);
    const received = new Map<string, number>();
    while (received.size < TASKS) {
      const frame = await listen.nextMessage((m: Json) => m.method === 'notifications/tasks', 15_000);
      received.set(frame.params.taskId as string, textOf(frame.params.result).length);
    }
    listen.close();
    expect([...received.keys()].sort()).toEqual([...taskIds].sort());
    for (const length of received.values()) expect(length).toBeGreaterThan(RESULT_CHARS);
  }, 60_000);

  it('closes a legacy GET stream whose client never reads its ~1 MB pushes, and delivers them all to a client that reads', async () => {
    const shim = stack.shim();
    const session = await LegacySession.open(shim.url);
    const asks = 6;
    const taskIds: string[] = [];
    for (let i = 0; i < asks; i++) {
      const created = await session.result('tools/call', { name: 'confirm_delete', arguments: { filename: `${i}`.repeat(RESULT_CHARS) }, task: {} });
      taskIds.push(created.task.taskId as string);
    }
    for (const taskId of taskIds) await pollUntil(() => session.result('tasks/get', { taskId }), (task: Json) => task.status === 'input_required');

    const before = (await figures(shim)).cuts;
    const socket = await stalledRequest(shim, 'GET', session.headers({ accept: 'text/event-stream' }));
    const seen = await untilCut(shim, before);
    expect(Math.max(...seen.map((each) => each.buffered))).toBeLessThanOrEqual(MAX_STREAM_BYTES + RESULT_CHARS + 4 * KIB);
    expect(await figures(shim)).toMatchObject({ buffered: 0, gets: 0 });
    expect(await readToClose(socket)).toBeLessThan(asks * RESULT_CHARS);

    // Nothing was lost: pushes the cut stream claimed go out on the next one.
    const stream = session.openGetStream();
    const pushed = await pollUntil(
      async () => stream.events.filter((event) => event.message?.method === 'elicitation/create').length,
      (count) => count === asks,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    expect(pushed).toBe(asks);
    stream.close();
    for (const taskId of taskIds) await session.result('tasks/cancel', { taskId });
    await session.delete();
  }, 60_000);

  it('refuses a new stream with HTTP 429 -32012 while the replica holds more unsent stream bytes than its total, and accepts one again once they are gone', async () => {
    // A long keep-alive, so that only the total acts here; a per-stream bound above all the snapshots.
    const totalBytes = 512 * KIB;
    const shim = await stack.startShim({
      store: 'embedded',
      env: {
        SHIM_LISTEN_KEEPALIVE_MS: '60000',
        SHIM_MAX_STREAM_BUFFER_BYTES: String(64 * 1024 * KIB),
        SHIM_MAX_STREAM_BUFFER_TOTAL_BYTES: String(totalBytes),
      },
    });
    const ids = await bigTasks(shim, 8);
    const socket = await stalledListen(shim, ids);
    await pollUntil(() => figures(shim), (now) => now.buffered > totalBytes, { timeoutMs: 15_000, intervalMs: 25 });

    const client = new Sep2663Client(shim.url);
    expect((await figures(shim)).refusals).toBe(0);
    const refused = await client.request('subscriptions/listen', { notifications: { taskIds: ids.slice(0, 1) } });
    expect(refused.status).toBe(429);
    expect((await figures(shim)).refusals).toBe(1);
    expect(refused.body.error).toEqual({
      code: -32012,
      message: `Too many unsent stream bytes: this replica holds at most ${totalBytes} for slow readers; retry shortly`,
      data: { limit: totalBytes, open: expect.any(Number) },
    });

    socket.destroy();
    await pollUntil(() => figures(shim), (now) => now.buffered === 0 && now.listens === 0, { timeoutMs: 10_000 });
    const listen = await client.listen({ notifications: { taskIds: ids.slice(0, 1) } });
    expect(listen.status).toBe(200);
    expect((await listen.nextMessage((m: Json) => m.method === 'notifications/tasks', 15_000)).params.taskId).toBe(ids[0]);
    listen.close();
  }, 90_000);
});
