import type { ServerResponse } from 'node:http';
import type { Reply } from '../wire/reply.js';

export async function writeReply(res: ServerResponse, reply: Reply): Promise<void> {
  switch (reply.kind) {
    case 'json': {
      const body = JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        ...reply.headers,
      });
      res.end(body);
      return;
    }
    case 'json-text':
      res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.text) });
      res.end(reply.text);
      return;
    case 'empty':
      res.writeHead(reply.status, reply.headers);
      res.end();
      return;
    case 'stream':
      await reply.serve(res);
      return;
  }
}
