import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OpenStreams } from '../../src/http/open-streams.js';
import { writeReply } from '../../src/http/write-reply.js';
import type { SseStream } from '../../src/wire/reply.js';

const WAIT = { timeout: 5_000, interval: 10 };

/** Counts what the HTTP edge does with a stream's slot and close hook. */
function counters() {
  return { renewed: 0, released: 0, closed: 0, ran: 0, shutdown: 0 };
}

/** A real HTTP server whose every request waits for `ready`, then is answered with `stream()` through writeReply. */
async function serve(streams: OpenStreams, stream: () => SseStream, ready: (req: IncomingMessage, res: ServerResponse) => Promise<void> = async () => undefined): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    void ready(req, res).then(() => writeReply(res, { kind: 'sse', stream: stream() }, streams));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('the SSE helper (src/http/sse.ts)', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('opens the stream with SSE headers, sends keep-alive comments renewing the slot, and ends it through its shutdown hook', async () => {
    const streams = new OpenStreams(undefined, 50);
    const seen = counters();
    const { server, url } = await serve(streams, () => ({
      headers: { 'x-extra': 'yes' },
      slot: { renew: () => void seen.renewed++, release: () => void seen.released++ },
      run: async (out) => {
        seen.ran++;
        out.write('data: first\n\n');
      },
      shutdown: (out) => {
        seen.shutdown++;
        out.end('data: last\n\n');
      },
      closed: () => void seen.closed++,
    }));
    servers.push(server);

    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(res.headers.get('x-extra')).toBe('yes');
    await vi.waitFor(() => expect(seen.renewed).toBeGreaterThanOrEqual(2), WAIT);
    expect(streams.size).toBe(1);

    streams.endAll();
    const text = await res.text();
    expect(text.startsWith('data: first\n\n: keep-alive\n\n')).toBe(true);
    expect(text.endsWith('data: last\n\n')).toBe(true);
    await vi.waitFor(() => expect(seen).toMatchObject({ ran: 1, shutdown: 1, released: 1, closed: 1 }), WAIT);
    expect(streams.size).toBe(0);
  });

  it('releases the slot and runs the close hook, without running the stream, when the client left while the adapter prepared it', async () => {
    const streams = new OpenStreams(undefined, 50);
    const seen = counters();
    let arrived: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const { server, url } = await serve(
      streams,
      () => ({
        slot: { renew: () => void seen.renewed++, release: () => void seen.released++ },
        run: async () => void seen.ran++,
        closed: () => void seen.closed++,
      }),
      // The adapter still reads the store while the client goes away.
      (_req, res) =>
        new Promise((resolve) => {
          res.once('close', () => resolve());
          arrived();
        }),
    );
    servers.push(server);

    const abort = new AbortController();
    const request = fetch(url, { signal: abort.signal }).catch(() => undefined);
    await reached;
    abort.abort();
    await request;
    await vi.waitFor(() => expect(seen).toMatchObject({ released: 1, closed: 1, ran: 0 }), WAIT);
    expect(streams.size).toBe(0);
  });
});
