import type { ServerResponse } from 'node:http';
import type { SseStream } from '../wire/reply.js';
import type { OpenStreams } from './open-streams.js';

const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/**
 * The one place an SSE response is opened (SEP-2663 listens, legacy GET and tasks/result
 * streams): headers, then every frame through the replica's byte budget
 * (docs/decisions/0018-stream-backpressure.md), keep-alive comments from the moment the headers
 * are out (so that a client that stops reading during a replay is noticed too) with the slot
 * renewed at each one, the graceful end registered for a shutdown, and everything released
 * when the response closes, whoever closed it.
 */
export async function serveSse(res: ServerResponse, stream: SseStream, streams: OpenStreams): Promise<void> {
  const { slot } = stream;
  // The client left while the adapter prepared the stream: no close event is left to come.
  if (res.destroyed) {
    slot?.release();
    stream.closed?.();
    return;
  }
  res.writeHead(200, stream.headers ? { ...SSE_HEADERS, ...stream.headers } : SSE_HEADERS);
  const out = streams.budget.track(res);
  const keepAlive = setInterval(() => {
    if (out.keepAlive()) slot?.renew();
  }, streams.keepAliveMs);
  const unregister = streams.add(() => (stream.shutdown ? stream.shutdown(out) : out.end()));
  res.once('close', () => {
    clearInterval(keepAlive);
    unregister();
    slot?.release();
    stream.closed?.();
  });
  await stream.run(out);
}
