import type { ServerResponse } from 'node:http';
import type { Reply } from '../wire/reply.js';
import type { OpenStreams } from './open-streams.js';
import { relayAnswer, type RelayObserver } from './relay.js';
import { serveSse } from './sse.js';

/**
 * Writes an adapter's answer: JSON at once, an SSE stream through the one stream helper, an
 * upstream's answer as it arrives. `streams` is where SSE streams register (absent where no
 * adapter answers with a stream); `observer` hears a relayed answer's status once it closed.
 */
export function writeReply(res: ServerResponse, reply: Reply, streams?: OpenStreams, observer?: RelayObserver): Promise<void> | undefined {
  switch (reply.kind) {
    case 'json': {
      const body = JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        ...reply.headers,
      });
      res.end(body);
      return undefined;
    }
    case 'json-text':
      res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.text) });
      res.end(reply.text);
      return undefined;
    case 'empty':
      res.writeHead(reply.status, reply.headers);
      res.end();
      return undefined;
    case 'relay':
      relayAnswer(res, reply, observer);
      return undefined;
    case 'sse':
      if (!streams) throw new Error('an SSE answer where no stream may open');
      return serveSse(res, reply.stream, streams);
  }
}
