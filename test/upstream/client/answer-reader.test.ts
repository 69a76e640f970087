import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerTooLargeError } from '../../../src/upstream/client/answer-reader.js';
import { UpstreamRpc } from '../../../src/upstream/client/rpc-client.js';

/** How the test server answers the request with this id. */
const answers = new Map<number, (res: ServerResponse) => void>();
let server: Server;
let url: string;
const rpcs: UpstreamRpc[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answers.get((JSON.parse(Buffer.concat(chunks).toString()) as { id: number }).id)!(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await Promise.all(rpcs.map((rpc) => rpc.close()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function rpc(maxAnswerBytes?: number): UpstreamRpc {
  const client = new UpstreamRpc({ url, maxAnswerBytes });
  rpcs.push(client);
  return client;
}

/** Writes `parts` one by one, each flushed on its own (so that each arrives as a chunk of its own). */
function inPieces(parts: Buffer[]): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const next = (i: number): void => {
      if (i === parts.length) {
        res.end();
        return;
      }
      res.write(parts[i], () => setTimeout(() => next(i + 1), 5));
    };
    next(0);
  };
}

const sse = (message: unknown): string => `data: ${JSON.stringify(message)}\n\n`;

describe('reading an answer as it arrives', () => {
  it('reads characters whose bytes arrive in two chunks', async () => {
    const text = 'Grüße, 東京 🌍';
    const bytes = Buffer.from(sse({ jsonrpc: '2.0', id: 1, result: { text } }));
    // Cut inside the 4-byte emoji and inside a 3-byte character.
    const emoji = bytes.indexOf(Buffer.from('🌍')) + 2;
    const kanji = bytes.indexOf(Buffer.from('東')) + 1;
    answers.set(1, inPieces([bytes.subarray(0, kanji), bytes.subarray(kanji, emoji), bytes.subarray(emoji)]));
    const client = rpc();
    const answer = await client.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x' }), 1, client.headers({})).answer;
    expect(answer.response).toEqual({ jsonrpc: '2.0', id: 1, result: { text } });
  });

  it('hands every other message to the caller before the response, and bounds each message, not the stream', async () => {
    const progress = (n: number) => sse({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 2, progress: n, message: 'x'.repeat(3_000) } });
    answers.set(2, inPieces([...Array.from({ length: 10 }, (_, n) => Buffer.from(progress(n))), Buffer.from(sse({ jsonrpc: '2.0', id: 2, result: {} }))]));
    const heard: number[] = [];
    const client = rpc(4_096);
    const reader = client.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'x' }), 2, client.headers({}), (message) => heard.push((message.params as { progress: number }).progress));
    expect((await reader.answer).response).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(heard).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses one message larger than the bound', async () => {
    answers.set(3, inPieces([Buffer.from(sse({ jsonrpc: '2.0', id: 3, result: { text: 'y'.repeat(10_000) } }))]));
    const client = rpc(4_096);
    const error = await client.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'x' }), 3, client.headers({})).answer.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AnswerTooLargeError);
  });
});
