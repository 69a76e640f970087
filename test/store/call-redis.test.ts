import { createServer, connect as connectTcp, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { callRedis, connect, disconnect, type RedisConnection } from '../../src/store/redis/connection.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

// Short deadlines keep the test quick; the production values only scale them.
const DEADLINES = { requestMs: 200, limitMs: 1_200 };

describe('callRedis deadlines', () => {
  let server: RedisServer;
  let commands: RedisConnection;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedis();
    commands = connect({ url: server.url }, 'commands');
    admin = new Redis(server.url);
    await commands.ping();
  });

  afterAll(async () => {
    await disconnect(commands);
    admin.disconnect();
    await server.stop();
  });

  it('waits past the request deadline for a connected Redis that answers slowly', async () => {
    // CLIENT PAUSE holds every other client's commands: the connection stays up, the answer is late.
    await admin.call('CLIENT', 'PAUSE', '600', 'ALL');
    const started = Date.now();
    await expect(callRedis('Task store', commands, () => commands.set('slow', '1'), DEADLINES)).resolves.toBe('OK');
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEADLINES.requestMs);
  });

  it('answers unavailable once a connected Redis stays silent past the limit', async () => {
    await admin.call('CLIENT', 'PAUSE', '2000', 'ALL');
    const started = Date.now();
    const error = await callRedis('Task store', commands, () => commands.get('slow'), DEADLINES).catch((err: unknown) => err);
    const waited = Date.now() - started;
    // The pause holds this client too: its next command waits the pause out, so later tests see Redis answer.
    await admin.ping();
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toBe('Task store is unavailable, retry later');
    expect(waited).toBeGreaterThanOrEqual(DEADLINES.limitMs);
    expect(waited).toBeLessThan(DEADLINES.limitMs + 1_000);
  });

  it('answers unavailable at the request deadline while Redis cannot be reached', async () => {
    const gone = await startRedis();
    const client = connect({ url: gone.url }, 'commands');
    try {
      await client.ping();
      await gone.halt();
      const started = Date.now();
      const error = await callRedis('Task store', client, () => client.get('anything'), DEADLINES).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(Date.now() - started).toBeLessThan(DEADLINES.requestMs + 800);
    } finally {
      await disconnect(client);
      await gone.stop();
    }
  });

  it('passes a Redis error through as it is', async () => {
    await admin.set('a-string', 'x');
    const error = await callRedis('Task store', commands, () => commands.hget('a-string', 'f'), DEADLINES).catch((err: unknown) => err);
    expect(error).not.toBeInstanceOf(UnavailableError);
    expect(String(error)).toMatch(/WRONGTYPE/);
  });
});

describe('callRedis write batching', () => {
  it('sends the commands issued in one turn of the event loop in one socket write', async () => {
    const server = await startRedis();
    const chunks: number[] = [];
    // A TCP relay in front of Redis that counts what arrives from the client, chunk by chunk.
    const relay = createServer((client) => {
      const upstream = connectTcp(server.port, '127.0.0.1');
      client.on('data', (chunk: Buffer) => {
        chunks.push(chunk.length);
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const commands = connect({ url: `redis://127.0.0.1:${(relay.address() as AddressInfo).port}` }, 'commands');
    try {
      await commands.ping();
      chunks.length = 0;
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => callRedis('Task store', commands, () => commands.set(`batched:${i}`, String(i)))));
      expect(replies).toEqual(Array.from({ length: 20 }, () => 'OK'));
      expect(chunks).toHaveLength(1);
      expect(await commands.get('batched:19')).toBe('19');
    } finally {
      await disconnect(commands);
      relay.close();
      await server.stop();
    }
  });
});
