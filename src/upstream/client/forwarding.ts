import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded. */
export const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
const HOP_BY_HOP_SET: ReadonlySet<string> = new Set(HOP_BY_HOP);

/** A client's request that the upstream answers, within the upstream session the client's maps to. */
export interface ForwardRequest {
  method: string;
  /** The client's headers as received: a flat list (name, value, …), repeats kept. */
  rawHeaders: readonly string[];
  body: Buffer | undefined;
  upstreamSessionId: string | undefined;
  /** Names the client's session in the answer, in place of the upstream's. */
  clientSessionId: string | undefined;
}

/**
 * Where the upstream's answer to a forwarded request goes (the HTTP edge writes it to the client).
 * Called in order: `head`, `data`…, then `end`; or `fail` at any point.
 */
export interface AnswerSink {
  /** The sender, told when the client goes away (it stops the upstream request). */
  bind(sender: { clientGone(): void }): void;
  /** Status and headers: a flat list (name, value, …) without hop-by-hop ones, repeats and order kept. */
  head(status: number, headers: string[]): void;
  /** One chunk as it arrived; false when the client is behind, and the sender waits for `onDrain`. */
  data(chunk: Buffer): boolean;
  onDrain(resume: () => void): void;
  end(): void;
  /** The upstream did not answer, or broke off. */
  fail(err: Error): void;
}

/**
 * The upstream's answer to a forwarded request, handed to the sink as it arrives. A slow client
 * pauses the upstream until it has read; a client that goes away stops the upstream request (and
 * the upstream sees the cancel).
 */
export class Forwarding implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private gone = false;
  private finished = false;

  constructor(
    private readonly sink: AnswerSink,
    private readonly clientSessionId: string | undefined,
    private readonly onUnreachable: ((operation: string, err: Error) => void) | undefined,
  ) {
    sink.bind(this);
  }

  /** Stops the upstream request now, or as soon as undici starts it. */
  clientGone(): void {
    if (this.finished) return;
    this.gone = true;
    if (this.controller) stop(this.controller);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) stop(controller);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, parsed: IncomingHttpHeaders): void {
    const raw = controller.rawHeaders;
    this.sink.head(statusCode, Array.isArray(raw) ? answerHeaders(raw, this.clientSessionId) : parsedAnswerHeaders(parsed, this.clientSessionId));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink.data(chunk)) return;
    controller.pause();
    this.sink.onDrain(() => controller.resume());
  }

  onResponseEnd(): void {
    this.finished = true;
    this.sink.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.finished = true;
    if (this.gone) return;
    this.onUnreachable?.('forward', err);
    this.sink.fail(err);
  }
}

function stop(controller: Dispatcher.DispatchController): void {
  controller.abort(new Error('the client went away'));
}

/** The client's headers as a flat list (lower-case names, repeats kept), without `dropped`. */
export function forwardedHeaders(raw: readonly string[], dropped: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (!dropped.has(name)) out.push(name, raw[i + 1] as string);
  }
  return out;
}

/**
 * The upstream's headers as a flat list without hop-by-hop ones, naming the client's session: the
 * raw list keeps repeats and their order.
 */
function answerHeaders(raw: ReadonlyArray<Buffer | string>, clientSessionId: string | undefined): string[] {
  const out: string[] = [];
  let named = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = latin1(raw[i]!).toLowerCase();
    if (HOP_BY_HOP_SET.has(name)) continue;
    if (name === 'mcp-session-id' && clientSessionId) {
      if (!named) out.push(name, clientSessionId);
      named = true;
      continue;
    }
    out.push(name, latin1(raw[i + 1]!));
  }
  return out;
}

/** The same from undici's parsed headers, when it gives no raw list. */
function parsedAnswerHeaders(parsed: IncomingHttpHeaders, clientSessionId: string | undefined): string[] {
  const out: string[] = [];
  for (const name in parsed) {
    const value = parsed[name];
    if (value === undefined || HOP_BY_HOP_SET.has(name)) continue;
    if (name === 'mcp-session-id' && clientSessionId) out.push(name, clientSessionId);
    else for (const item of Array.isArray(value) ? value : [value]) out.push(name, item);
  }
  return out;
}

/** Header bytes as node:http reads and writes them. */
function latin1(item: Buffer | string): string {
  return typeof item === 'string' ? item : item.toString('latin1');
}
