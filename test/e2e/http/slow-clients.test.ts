import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { buildRequest, Sep2663Client } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

const stack = useStack({ stores: ['redis'], args: ['--headers-timeout-ms', '1000', '--request-timeout-ms', '2000'] });
/** node checks for overdue connections every second: a bound holds within that much more. */
const CHECK_MS = 1_000;
/** Room for a busy host's scheduling, far below node's own defaults (60 s headers, 300 s request). */
const SLACK_MS = 2_000;

interface Conn {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves with the ms from connect to close. */
  closed: Promise<number>;
}

function open(baseUrl: string): Promise<Conn> {
  const { hostname, port } = new URL(baseUrl);
  const started = Date.now();
  const socket = connect(Number(port), hostname);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

/** Writes `text` a byte at a time, one every `everyMs`, until the socket closes or `text` ends. */
function drip(conn: Conn, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (conn.socket.destroyed || i >= text.length) clearInterval(timer);
    else conn.socket.write(text[i++] as string);
  }, everyMs);
}

function ping(host: string): string {
  const { headers, body } = buildRequest('ping', {}, { id: 'raw' });
  const lines = Object.entries({ ...headers, host, 'content-length': String(Buffer.byteLength(JSON.stringify(body))) }).map(([k, v]) => `${k}: ${v}`);
  return `POST /mcp HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${JSON.stringify(body)}`;
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('slow clients', () => {
  it('drops a client that sends its headers a byte at a time once the headers timeout passes', async () => {
    const conn = await open(stack.shim().baseUrl);
    drip(conn, ping(new URL(stack.shim().baseUrl).host), 250);
    const after = await conn.closed;
    expect(after).toBeGreaterThanOrEqual(1_000);
    expect(after).toBeLessThan(1_000 + CHECK_MS + SLACK_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('drops a client that sends its body a byte at a time once the request timeout passes', async () => {
    const conn = await open(stack.shim().baseUrl);
    const request = ping(new URL(stack.shim().baseUrl).host);
    const bodyAt = request.indexOf('\r\n\r\n') + 4;
    conn.socket.write(request.slice(0, bodyAt));
    drip(conn, request.slice(bodyAt), 250);
    const after = await conn.closed;
    expect(after).toBeGreaterThanOrEqual(2_000);
    expect(after).toBeLessThan(2_000 + CHECK_MS + SLACK_MS);
    expect(conn.received()).not.toContain('"result"');
  });

  it('keeps an idle keep-alive connection past the headers timeout', async () => {
    const conn = await open(stack.shim().baseUrl);
    const host = new URL(stack.shim().baseUrl).host;
    conn.socket.write(ping(host));
    await waitFor(() => conn.received().includes('"result"'), 5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000 + 2 * CHECK_MS));
    expect(conn.socket.destroyed).toBe(false);
    conn.socket.write(ping(host));
    await waitFor(() => conn.received().split('"result"').length === 3, 5_000);
    conn.socket.destroy();
  });

  it('does not cut a listen stream that lasts longer than the request timeout', async () => {
    const client = new Sep2663Client(stack.shim().url);
    const task = await client.createTask('slow_compute', { seconds: 5 });
    const stream = await client.listen({ notifications: { taskIds: [task.taskId] } });
    try {
      const started = Date.now();
      await stream.nextMessage((m) => m.method === 'notifications/tasks' && m.params.taskId === task.taskId && m.params.status === 'completed', 10_000);
      expect(Date.now() - started).toBeGreaterThan(2_000 + CHECK_MS);
    } finally {
      stream.close();
    }
  });
});

describe('the default headers timeout', () => {
  it('drops a client that sends a header byte per second within 10 s', async () => {
    const shim = await startShimProcess({ upstreamUrl: stack.upstreamUrl, redisUrl: stack.redis.url });
    try {
      const conn = await open(shim.baseUrl);
      drip(conn, ping(new URL(shim.baseUrl).host), 1_000);
      const after = await conn.closed;
      expect(after).toBeGreaterThanOrEqual(10_000);
      expect(after).toBeLessThan(10_000 + CHECK_MS + SLACK_MS);
    } finally {
      await shim.stop();
    }
  }, 20_000);
});

describe('--max-connections', () => {
  let capped: ShimProcess;
  beforeAll(async () => {
    capped = await stack.startShim({ args: ['--max-connections', '3'] });
  });

  it('closes connections over the cap at once, and accepts again when one closes', async () => {
    const host = new URL(capped.baseUrl).host;
    const held = await Promise.all([1, 2, 3].map(() => open(capped.baseUrl)));
    for (const conn of held) conn.socket.write(ping(host));
    await waitFor(() => held.every((conn) => conn.received().includes('"result"')), 5_000);

    const over = await open(capped.baseUrl);
    over.socket.write(ping(host));
    expect(await over.closed).toBeLessThan(SLACK_MS);
    expect(over.received()).toBe('');

    held[0]?.socket.destroy();
    await held[0]?.closed;
    // The server learns of the close a moment after the client: retry briefly.
    let answered = '';
    for (let attempt = 0; attempt < 20 && !answered.includes('"result"'); attempt++) {
      const again = await open(capped.baseUrl);
      again.socket.write(ping(host));
      await Promise.race([again.closed, waitFor(() => again.received().includes('"result"'), 1_000).catch(() => undefined)]);
      answered = again.received();
      again.socket.destroy();
    }
    expect(answered).toContain('"result"');
    for (const conn of held) conn.socket.destroy();
  });
});
