import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runOpenLoop } from '../../bench/lib/open-loop.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => handler(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const ok = (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
};

describe('open-loop load generator', () => {
  it('sends the rate it is given, spread evenly over time instead of in bursts', async () => {
    const arrivals: number[] = [];
    const url = await serve((req, res) => {
      arrivals.push(performance.now());
      ok(req, res);
    });
    const result = await runOpenLoop({ url, rate: 500, connections: 8, durationS: 2, warmupS: 0.2, body: '{}' });
    expect(result).toMatchObject({ offered: 1000, ok: 1000, non2xx: 0, errors: 0, timeouts: 0, rps: 500 });
    expect(arrivals.length).toBe(1100);
    // 500 req/s is 10 per 20 ms; a per-second quota sent back to back would put hundreds in one
    // window. Arrivals are timed in this process, which the rest of the suite shares two cores
    // with: a stall of ~100 ms here bunches 50 evenly sent requests (seen once, 61 in a full run),
    // so the bound sits between that and a quota burst.
    let densest = 0;
    for (let i = 0, j = 0; i < arrivals.length; i++) {
      while (arrivals[i]! - arrivals[j]! > 20) j++;
      densest = Math.max(densest, i - j + 1);
    }
    expect(densest).toBeLessThan(150);
  }, 30_000);

  it('charges a request that waited behind a stalled server from the time it was due', async () => {
    let seen = 0;
    const url = await serve((req, res) => {
      if (++seen === 400) {
        const until = Date.now() + 200;
        while (Date.now() < until);
      }
      ok(req, res);
    });
    const result = await runOpenLoop({ url, rate: 500, connections: 8, durationS: 2, warmupS: 0.2, body: '{}' });
    expect(result.ok).toBe(1000);
    // About 100 requests fell due during the stall, far more than the 8 a closed loop would have had in flight.
    expect(result.queued).toBeGreaterThan(50);
    expect(result.max).toBeGreaterThanOrEqual(190);
    expect(result.p99).toBeGreaterThan(100);
  }, 30_000);

  it('counts answers that are not 2xx, and reads chunked ones to their end', async () => {
    const failing = await serve((_req, res) => res.writeHead(500, { 'content-length': 0 }).end());
    expect(await runOpenLoop({ url: failing, rate: 200, connections: 4, durationS: 1, warmupS: 0 })).toMatchObject({ offered: 200, ok: 0, non2xx: 200 });
    const chunked = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\n');
      setImmediate(() => res.end('data: {}\n\n'));
    });
    expect(await runOpenLoop({ url: chunked, rate: 200, connections: 4, durationS: 1, warmupS: 0 })).toMatchObject({ offered: 200, ok: 200, errors: 0 });
  }, 30_000);
});
