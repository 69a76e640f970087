/**
 * Baseline (b): the practical limit of a Node + Redis request path. A bare node:http server that
 * reads and JSON-parses each POST body, then does exactly one Redis command:
 *   POST /get     → GET of one stored task document (about the size of a shim task hash)
 *   POST /create  → SET of a new task document with a TTL (one write)
 * Usage: node --import tsx bench/baselines/bare-redis.ts --redis URL [--autopipeline]
 * --autopipeline: ioredis enableAutoPipelining (commands of one tick in one write), to measure what
 * that is worth on this request path.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';

const redisUrl = process.argv[process.argv.indexOf('--redis') + 1]!;
const redis = new Redis(redisUrl, { enableAutoPipelining: process.argv.includes('--autopipeline') });
const doc = JSON.stringify({
  taskId: '00000000-0000-4000-8000-000000000000',
  status: 'completed',
  createdAt: new Date().toISOString(),
  lastUpdatedAt: new Date().toISOString(),
  ttlMs: 3_600_000,
  pollIntervalMs: 1000,
  result: { content: [{ type: 'text', text: 'Hello, bench!' }] },
});
await redis.set('bare:task', doc);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? null;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const done = (result: unknown): void => {
      const body = JSON.stringify({ jsonrpc: '2.0', id, result });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const fail = (): void => void res.writeHead(500).end();
    if (req.url === '/create') {
      const taskId = randomUUID();
      redis.set(`bare:task:${taskId}`, doc, 'PX', 60_000).then(() => done({ task: { taskId, status: 'working' } }), fail);
    } else {
      redis.get('bare:task').then((value) => done(JSON.parse(value ?? 'null')), fail);
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(`bare-redis listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void redis.quit().finally(() => process.exit(0));
});
