import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LimitExceededError } from '../../src/core/errors.js';
import { StreamBudget, type BudgetedStream } from '../../src/http/stream-budget.js';

const KIB = 1024;
const FRAME = `data: ${'x'.repeat(256 * KIB)}\n\n`;
const WAIT = { timeout: 5_000, interval: 10 };

/** A real HTTP server whose every response is handed to the test as a budgeted SSE stream. */
async function serve(budget: StreamBudget): Promise<{ server: Server; next: () => Promise<{ stream: BudgetedStream; res: ServerResponse }> }> {
  const waiting: Array<(value: { stream: BudgetedStream; res: ServerResponse }) => void> = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    waiting.shift()?.({ stream: budget.track(res), res });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

/** A client that sends a GET and then reads only when told to. */
async function client(server: Server, reading: boolean): Promise<Socket> {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  if (reading) socket.on('data', () => undefined);
  else socket.pause();
  socket.write('GET / HTTP/1.1\r\nhost: test\r\n\r\n');
  return socket;
}

/** Resolves once the response has emitted 'close' (its budget is settled then). */
function closed(res: ServerResponse): Promise<void> {
  return res.closed ? Promise.resolve() : new Promise((resolve) => res.once('close', () => resolve()));
}

/** Writes frames until one is refused (the stream closed) or `max` went out; returns how many went out. */
function fill(stream: BudgetedStream, max: number): number {
  for (let i = 0; i < max; i++) if (!stream.write(FRAME)) return i;
  return max;
}

/** Writes a frame whenever the stream has drained, until it closes or `max` went out. */
async function pacedFill(stream: BudgetedStream, max: number): Promise<number> {
  for (let i = 0; i < max; i++) {
    if (!stream.write(FRAME)) return i;
    if (!(await stream.drained())) return i + 1;
  }
  return max;
}

describe('StreamBudget (src/http/stream-budget.ts) on real sockets', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const step of cleanup.splice(0)) step();
  });

  /** Two streams on one server: one whose client never reads, and one whose client reads all. */
  async function stalledAndReading(budget: StreamBudget): Promise<Record<'stalled' | 'reading', { stream: BudgetedStream; res: ServerResponse }>> {
    const { server, next } = await serve(budget);
    cleanup.push(() => server.close());
    const stalledOpened = next();
    const stalledSocket = await client(server, false);
    const stalled = await stalledOpened;
    const readingOpened = next();
    const readingSocket = await client(server, true);
    const reading = await readingOpened;
    cleanup.push(() => stalledSocket.destroy(), () => readingSocket.destroy());
    return { stalled, reading };
  }

  it('closes a stream when a frame is due while it holds more than the per-stream bound unsent', async () => {
    const budget = new StreamBudget({ maxStreamBytes: 512 * KIB, maxTotalBytes: 1024 * 1024 * KIB });
    const { server, next } = await serve(budget);
    cleanup.push(() => server.close());
    const opened = next();
    const socket = await client(server, false);
    cleanup.push(() => socket.destroy());
    const { stream, res } = await opened;
    // The kernel takes a few MB before anything stays in the process; 200 frames are 50 MB.
    const written = fill(stream, 200);
    expect(written).toBeLessThan(200);
    expect(budget.bufferedBytes).toBeLessThanOrEqual(512 * KIB + FRAME.length);
    await closed(res);
    expect(budget.bufferedBytes).toBe(0);
    expect(budget.cutStreams).toBe(1);
  });

  it('closes at a keep-alive a stream whose client read nothing since the previous one, and keeps one whose client reads', async () => {
    const budget = new StreamBudget({ maxStreamBytes: 1024 * 1024 * KIB, maxTotalBytes: 1024 * 1024 * KIB });
    const { stalled, reading } = await stalledAndReading(budget);

    // Enough that the stalled client's kernel buffers fill and a frame waits in the process.
    void pacedFill(stalled.stream, 40);
    await vi.waitFor(() => expect(stalled.stream.behind).toBe(true), WAIT);
    const readingDone = pacedFill(reading.stream, 40);

    expect(stalled.stream.keepAlive()).toBe(true); // the first tick notes what is unsent
    expect(stalled.stream.keepAlive()).toBe(false); // nothing of it read since: closed
    await closed(stalled.res);
    expect(await readingDone).toBe(40);
    expect(reading.stream.keepAlive()).toBe(true);
    expect(reading.stream.keepAlive()).toBe(true);
    expect(budget.cutStreams).toBe(1);
  });

  it('over the replica total, refuses new streams and closes a lagging stream at its next frame, but writes to one that keeps up', async () => {
    const budget = new StreamBudget({ maxStreamBytes: 1024 * 1024 * KIB, maxTotalBytes: 256 * KIB });
    const { stalled, reading } = await stalledAndReading(budget);

    void pacedFill(stalled.stream, 40);
    await vi.waitFor(() => expect(budget.bufferedBytes).toBeGreaterThan(256 * KIB), WAIT);
    expect(budget.refusedStreams).toBe(0);
    expect(() => budget.admit()).toThrow(LimitExceededError);
    expect(budget.refusedStreams).toBe(1);

    expect(reading.stream.write(': small\n\n')).toBe(true);
    expect(stalled.stream.write(': small\n\n')).toBe(false);
    await closed(stalled.res);
    expect(budget.bufferedBytes).toBeLessThanOrEqual(256 * KIB);
    expect(() => budget.admit()).not.toThrow();
    expect(budget.refusedStreams).toBe(1);
  });
});
