import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from '../../src/http/read-body.js';
import type { RelayObserver } from '../../src/http/relay.js';
import { writeReply } from '../../src/http/write-reply.js';
import { UpstreamRpc } from '../../src/upstream/client/rpc-client.js';
import { upstreamUnreachable } from '../../src/wire/legacy/endpoint.js';

/** The client's and upstream's session ids of a forwarded request. */
interface ForwardRoute {
  clientSessionId?: string;
  upstreamSessionId?: string;
}

/** What the legacy adapter answers for a forwarded message, written by the HTTP edge. */
function forward(http: UpstreamRpc, req: IncomingMessage, res: ServerResponse, route: ForwardRoute, body: Buffer, observer: RelayObserver): void {
  void writeReply(
    res,
    {
      kind: 'relay',
      via: http,
      request: { method: req.method ?? 'POST', rawHeaders: req.rawHeaders, body, upstreamSessionId: route.upstreamSessionId, clientSessionId: route.clientSessionId },
      unreachable: upstreamUnreachable,
    },
    undefined,
    observer,
  );
}

/** A real node:http upstream and a real front server that forwards every request through the gateway's HTTP client and the edge's relay. */
interface Rig {
  front: string;
  upstream: { url: string; requests: Array<{ req: IncomingMessage; body: string }> };
  statuses: number[];
}

const servers: Server[] = [];
const passthroughs: UpstreamRpc[] = [];

afterEach(async () => {
  await Promise.all(passthroughs.splice(0).map((p) => p.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function rig(
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => void,
  options: { credentials?: Record<string, string>; route?: ForwardRoute; upstreamUrl?: (url: string) => string; before?: (res: ServerResponse) => void } = {},
): Promise<Rig> {
  const requests: Rig['upstream']['requests'] = [];
  const url = await listen(async (req, res) => {
    const body = (await readBody(req, 1 << 20)).toString();
    requests.push({ req, body });
    answer(req, res, body);
  });
  const passthrough = new UpstreamRpc({ url: options.upstreamUrl?.(url) ?? url, headers: options.credentials });
  passthroughs.push(passthrough);
  const statuses: number[] = [];
  const front = await listen(async (req, res) => {
    const body = await readBody(req, 1 << 20);
    options.before?.(res);
    forward(passthrough, req, res, options.route ?? { clientSessionId: 'client-session', upstreamSessionId: 'upstream-session' }, body, {
      forwarded: (status) => statuses.push(status),
    });
  });
  return { front, upstream: { url, requests }, statuses };
}

interface Answer {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

/** A raw header list (repeats allowed) of a POST to `url`: node:http adds no Host to one. */
function rawHeaders(url: string, headers: string[], body: string): string[] {
  return ['Host', new URL(url).host, ...headers, 'Content-Length', String(Buffer.byteLength(body))];
}

/** A POST with a raw header list; `onResponse` sees the response before its body is read. */
function post(url: string, headers: string[], body: string, onResponse?: (res: IncomingMessage) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: rawHeaders(url, headers, body) }, (res) => {
      onResponse?.(res);
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
}

function headerLines(raw: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const JSON_HEADERS = ['Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream'];

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

async function untilSome(list: readonly unknown[]): Promise<void> {
  while (list.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('Passthrough', () => {
  it('forwards the body and the client’s headers, repeats included, without hop-by-hop ones, the client’s credentials or its session id', async () => {
    const r = await rig((_req, res) => res.end('{}'), { credentials: { authorization: 'Bearer shim-own', 'x-upstream-key': 'configured' } });
    await post(
      r.front,
      [
        ...JSON_HEADERS,
        'Authorization', 'Bearer client-token',
        'Cookie', 'c=1',
        'Mcp-Session-Id', 'client-session',
        'X-Upstream-Key', 'client-chosen',
        'X-Repeated', 'one',
        'X-Repeated', 'two',
        'Keep-Alive', 'timeout=5',
        'TE', 'trailers',
      ],
      PING,
    );
    const [{ req, body }] = r.upstream.requests as [{ req: IncomingMessage; body: string }];
    expect(body).toBe(PING);
    expect(req.headers.authorization).toBe('Bearer shim-own');
    expect(req.headers['x-upstream-key']).toBe('configured');
    expect(req.headers['mcp-session-id']).toBe('upstream-session');
    expect(req.headers.cookie).toBeUndefined();
    expect(req.headers['keep-alive']).toBeUndefined();
    expect(req.headers.te).toBeUndefined();
    expect(req.headers.host).toBe(new URL(r.upstream.url).host);
    expect(req.headers['content-length']).toBe(String(Buffer.byteLength(PING)));
    expect(req.headers['content-type']).toBe('application/json');
    expect(headerLines(req.rawHeaders, 'x-repeated')).toEqual(['one', 'two']);
    expect(headerLines(req.rawHeaders, 'authorization')).toEqual(['Bearer shim-own']);
  });

  it('forwards a request that expected 100-continue without the expectation, whose body the shim has read', async () => {
    const r = await rig((_req, res) => res.end('{"ok":true}'));
    const answer = await post(r.front, [...JSON_HEADERS, 'Expect', '100-continue'], PING);
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('{"ok":true}');
    const [{ req, body }] = r.upstream.requests as [{ req: IncomingMessage; body: string }];
    expect(body).toBe(PING);
    expect(req.headers.expect).toBeUndefined();
  });

  it('sends Basic credentials of an upstream URL with userinfo, unless the configured headers carry Authorization', async () => {
    const withUserinfo = (url: string): string => url.replace('http://', 'http://us%40er:p%3Ass@');
    const basic = await rig((_req, res) => res.end('{}'), { upstreamUrl: withUserinfo });
    await post(basic.front, JSON_HEADERS, PING);
    expect(basic.upstream.requests[0]!.req.headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);

    const configured = await rig((_req, res) => res.end('{}'), { upstreamUrl: withUserinfo, credentials: { authorization: 'Bearer shim-own' } });
    await post(configured.front, JSON_HEADERS, PING);
    expect(headerLines(configured.upstream.requests[0]!.req.rawHeaders, 'authorization')).toEqual(['Bearer shim-own']);
  });

  const upstreamAnswer = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(201, [
      'Content-Type', 'text/event-stream',
      'Mcp-Session-Id', 'upstream-session',
      'Set-Cookie', 'a=1',
      'Set-Cookie', 'b=2',
      'Connection', 'keep-alive',
      'Keep-Alive', 'timeout=99',
      'Content-Length', '11',
    ]);
    res.end('data: {}\n\n\n');
  };

  it('answers with the upstream’s status and headers (repeats kept, hop-by-hop dropped), naming the client’s session', async () => {
    const r = await rig(upstreamAnswer);
    const answer = await post(r.front, JSON_HEADERS, PING);
    expect(answer.status).toBe(201);
    expect(answer.body.toString()).toBe('data: {}\n\n\n');
    expect(headerLines(answer.rawHeaders, 'mcp-session-id')).toEqual(['client-session']);
    expect(headerLines(answer.rawHeaders, 'set-cookie')).toEqual(['a=1', 'b=2']);
    expect(headerLines(answer.rawHeaders, 'content-type')).toEqual(['text/event-stream']);
    // The front server's own connection headers, not the upstream's.
    expect(headerLines(answer.rawHeaders, 'keep-alive')).not.toContain('timeout=99');
    expect(r.statuses).toEqual([201]);
  });

  it('keeps the headers set before (deprecation headers) and still every repeated upstream header', async () => {
    const r = await rig(upstreamAnswer, { before: (res) => res.setHeader('deprecation', '@1767225600') });
    const answer = await post(r.front, JSON_HEADERS, PING);
    expect(answer.status).toBe(201);
    expect(headerLines(answer.rawHeaders, 'deprecation')).toEqual(['@1767225600']);
    expect(headerLines(answer.rawHeaders, 'mcp-session-id')).toEqual(['client-session']);
    expect(headerLines(answer.rawHeaders, 'set-cookie')).toEqual(['a=1', 'b=2']);
  });

  it('passes the upstream’s session id through when the client has none of its own', async () => {
    const r = await rig(upstreamAnswer, { route: {} });
    const answer = await post(r.front, JSON_HEADERS, PING);
    expect(headerLines(answer.rawHeaders, 'mcp-session-id')).toEqual(['upstream-session']);
    expect(r.upstream.requests[0]!.req.headers['mcp-session-id']).toBeUndefined();
  });

  it('relays an SSE answer event by event: the first event reaches the client while the upstream still writes', async () => {
    let firstSeen!: () => void;
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    const r = await rig((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"first":true}\n\n');
      // The rest is written only once the client has the first event: a buffering relay never ends.
      void seen.then(() => res.end('event: message\ndata: {"last":true}\n\n'));
    });
    const answer = await within(
      post(r.front, JSON_HEADERS, PING, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('"first"')) firstSeen();
        });
      }),
      5_000,
      'the whole answer',
    );
    expect(answer.body.toString()).toBe('event: message\ndata: {"first":true}\n\nevent: message\ndata: {"last":true}\n\n');
  });

  it('delivers a large answer whole to a client that reads slowly', async () => {
    const payload = Buffer.alloc(8 << 20, 'abcdefghijklmnopqrstuvwxyz');
    const r = await rig((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(payload);
    });
    const answer = await within(
      post(r.front, JSON_HEADERS, PING, (res) => {
        res.pause();
        const timer = setInterval(() => (res.isPaused() ? res.resume() : res.pause()), 5);
        res.once('end', () => clearInterval(timer));
      }),
      20_000,
      'the large answer',
    );
    expect(answer.body.length).toBe(payload.length);
    expect(createHash('sha256').update(answer.body).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
  });

  it('stops the upstream request when the client goes away, and tells the observer', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const r = await rig((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      res.once('close', () => !res.writableFinished && upstreamClosed());
    });
    await new Promise<void>((resolve, reject) => {
      const req = request(r.front, { method: 'POST', headers: rawHeaders(r.front, JSON_HEADERS, PING) }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.once('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end(PING);
    });
    await within(closed, 5_000, 'the upstream request stopped');
    await within(untilSome(r.statuses), 5_000, 'the observer told');
    expect(r.statuses).toEqual([200]);
  });

  it('answers 502 with a JSON-RPC -32603 when the upstream is unreachable, and tells the observer', async () => {
    const gone = await listen(() => undefined);
    await new Promise<void>((resolve) => {
      const server = servers.pop()!;
      server.close(() => resolve());
    });
    const passthrough = new UpstreamRpc({ url: gone });
    passthroughs.push(passthrough);
    const statuses: number[] = [];
    const front = await listen(async (req, res) => {
      const body = await readBody(req, 1 << 20);
      forward(passthrough, req, res, { clientSessionId: 'c' }, body, { forwarded: (status) => statuses.push(status) });
    });
    const answer = await post(front, JSON_HEADERS, PING);
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603, message: expect.stringMatching(/^Upstream unreachable/) } });
    await within(untilSome(statuses), 5_000, 'the observer told');
    expect(statuses).toEqual([502]);
  });
});
