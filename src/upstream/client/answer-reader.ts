import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { EventSourceParser } from 'eventsource-parser';
import { safeJson, sseMessages } from './sse-messages.js';

export type JsonRpcMessage = Record<string, unknown>;

/** The upstream's answer to one POST of a JSON-RPC request. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC response to the request: a JSON body, or the event of an SSE body that names the request's id. */
  response?: JsonRpcMessage;
}

/** The answer grew past the bound every upstream answer has (the upstream is untrusted input). */
export class AnswerTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the upstream sent a message larger than ${limit} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

/**
 * How long an event stream may stay open after it carried the response: the spec says the server
 * SHOULD end it, and a connection that never ends must not be held for nothing.
 */
const LINGER_MS = 2_000;

/**
 * Reads the answer to one POSTed request straight from undici's dispatch callbacks (no web
 * streams, no body stream): a JSON body is kept as its chunks and parsed once at the end; an SSE
 * body is parsed as it arrives, every message that is not the response going to `onMessage`
 * (server requests and notifications that the upstream relates to this request). The answer
 * resolves at the response; reading goes on to the end of the stream, for what the upstream sends
 * after it, for at most LINGER_MS. Each message is bounded by `maxBytes` (a JSON body whole; on
 * an event stream, what arrives between two events), so that a long stream of progress is fine
 * and one message too large for memory is not.
 */
export class AnswerReader implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  private resolve!: (answer: Answer) => void;
  private reject!: (err: Error) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private aborted: Error | undefined;
  private settled = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] | undefined;
  private parser: EventSourceParser | undefined;
  private decoder: TextDecoder | undefined;
  /** Bytes of the message being read: the whole JSON body, or what came since the stream's last event. */
  private bytes = 0;
  private linger: NodeJS.Timeout | undefined;

  constructor(
    private readonly id: string | number,
    private readonly maxBytes: number,
    private readonly onMessage?: (message: JsonRpcMessage) => void,
  ) {
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Stops reading (a timeout, the caller's abort): the answer rejects with `reason` at once, unless it came already. */
  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = reason;
    this.fail(reason);
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted) controller.abort(this.aborted);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    const type = headers['content-type'];
    if (typeof type === 'string' && type.includes('text/event-stream')) {
      this.parser = sseMessages((data) => this.event(data));
    } else {
      this.chunks = [];
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      this.fail(new AnswerTooLargeError(this.maxBytes));
      controller.abort(new AnswerTooLargeError(this.maxBytes));
      return;
    }
    if (this.parser) this.parser.feed(this.text(chunk));
    else this.chunks!.push(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.linger);
    if (this.parser) {
      if (this.decoder) this.parser.feed(this.decoder.decode());
      // A last event without its blank line still counts, as the upstream meant to send it.
      this.parser.reset({ consume: true });
    } else if (this.chunks && this.chunks.length > 0) {
      const text = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
      const parsed = safeJson(text);
      if (isMessage(parsed)) this.respond(parsed);
    }
    this.respond(undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    clearTimeout(this.linger);
    this.fail(this.aborted ?? err);
  }

  /**
   * A chunk as text. Most chunks end on a whole character (an event ends with a line break):
   * those decode on their own; from the first chunk that may end inside one, a streaming decoder
   * carries the rest over to the next.
   */
  private text(chunk: Buffer): string {
    if (!this.decoder && (chunk.length === 0 || chunk[chunk.length - 1]! < 0x80)) return chunk.toString('utf8');
    this.decoder ??= new TextDecoder();
    return this.decoder.decode(chunk, { stream: true });
  }

  private event(data: string): void {
    this.bytes = 0;
    const parsed = safeJson(data);
    if (!isMessage(parsed)) return;
    if (!this.settled && parsed.id === this.id && parsed.method === undefined && ('result' in parsed || 'error' in parsed)) {
      this.respond(parsed);
      this.linger = setTimeout(() => this.controller?.abort(new Error('the upstream kept the stream open after its response')), LINGER_MS);
      this.linger.unref();
      return;
    }
    this.onMessage?.(parsed);
  }

  private respond(response: JsonRpcMessage | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve({ status: this.status, headers: this.headers, response });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }
}

function isMessage(value: unknown): value is JsonRpcMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
