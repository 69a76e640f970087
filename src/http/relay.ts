import type { ServerResponse } from 'node:http';
import type { AnswerSink } from '../upstream/client/rpc-client.js';
import type { RelayReply } from '../wire/reply.js';

/** Told the client's HTTP status once a relayed answer's response closed (traffic recording). */
export interface RelayObserver {
  forwarded(status: number): void;
}

/** Sends a forwarded request through the gateway's HTTP client and writes its answer as it arrives. */
export function relayAnswer(res: ServerResponse, reply: RelayReply, observer: RelayObserver | undefined): void {
  reply.via.forward(reply.request, new ResponseRelay(res, reply, observer));
}

/**
 * The upstream's answer to the client: status and headers, then each chunk as it arrives, so
 * that an SSE answer is flushed event by event. A slow client pauses the upstream until its
 * socket drains; a client that goes away stops the upstream request.
 */
class ResponseRelay implements AnswerSink {
  private sender: { clientGone(): void } | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly reply: RelayReply,
    observer: RelayObserver | undefined,
  ) {
    res.once('close', () => {
      if (!res.writableFinished) this.sender?.clientGone();
      observer?.forwarded(res.statusCode);
    });
  }

  bind(sender: { clientGone(): void }): void {
    this.sender = sender;
  }

  head(status: number, headers: string[]): void {
    const res = this.res;
    // Headers set already (the cutover's deprecation headers) are merged by name, which a flat
    // list cannot be: those answers go by an object, repeated upstream headers as arrays.
    if (res.getHeaderNames().length === 0) res.writeHead(status, headers);
    else res.writeHead(status, byName(headers));
  }

  data(chunk: Buffer): boolean {
    return this.res.write(chunk);
  }

  onDrain(resume: () => void): void {
    this.res.once('drain', resume);
  }

  end(): void {
    this.res.end();
  }

  fail(err: Error): void {
    if (this.res.headersSent) {
      this.res.destroy();
      return;
    }
    const body = JSON.stringify(this.reply.unreachable(err));
    this.res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }
}

function byName(flat: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] as string;
    const value = flat[i + 1] as string;
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}
