import type { ForwardRequest, UpstreamRpc } from '../upstream/client/rpc-client.js';

/**
 * What a wire adapter answers; the HTTP edge (src/http/write-reply.ts) writes it. No adapter
 * writes to a socket: a stream is a kind of Reply too, which the edge drives. `fromUpstream`
 * marks an answer the upstream gave and the shim only carried (traffic recording counts it as
 * passthrough, as a relay).
 */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string>; fromUpstream?: boolean }
  /** A JSON-RPC result already serialised (the tasks/get fast path); never an error. */
  | { kind: 'json-text'; status: number; text: string }
  | { kind: 'empty'; status: number; headers?: Record<string, string>; fromUpstream?: boolean }
  | { kind: 'sse'; stream: SseStream }
  | RelayReply;

/**
 * The upstream's answer relayed to the client as it arrives (passthrough): the gateway's HTTP
 * client sends `request`, and the edge writes the answer with the client's backpressure.
 */
export interface RelayReply {
  kind: 'relay';
  via: Pick<UpstreamRpc, 'forward'>;
  request: ForwardRequest;
  /** The body of the 502 answer when the upstream cannot be reached before anything was written. */
  unreachable: (err: Error) => unknown;
}

/**
 * An SSE stream as an adapter describes it. The edge writes the headers, then calls `run`; it
 * owns everything every stream needs: keep-alive comments, the slot's renewal and release, the
 * graceful end at shutdown, and the byte budget every frame is written through
 * (docs/decisions/0018-stream-backpressure.md).
 */
export interface SseStream {
  /** Response headers besides the SSE ones. */
  headers?: Record<string, string>;
  /** The stream's place in its principal's open-stream count: renewed with each keep-alive, released at close. */
  slot?: { renew(): void; release(): void };
  /** Writes the stream's frames; it may keep writing after it resolves (change events). */
  run(out: SseOut): Promise<void>;
  /** The graceful end (a shutdown); `out.end()` when absent. */
  shutdown?(out: SseOut): void;
  /** Once, when the stream closes, whoever closed it (also when the client left before it opened). */
  closed?(): void;
}

/** One open SSE response, written only through here (the edge's budgeted stream). */
export interface SseOut {
  readonly closed: boolean;
  /** True while the client has not read what the last write left unsent. */
  readonly behind: boolean;
  /** Writes one frame, or closes the stream when it may hold no more; false once closed. */
  write(frame: string): boolean;
  /** Resolves true once the client has read what is buffered, false if the stream closes first. */
  drained(): Promise<boolean>;
  /** Holds writes back until `uncork`, so that a burst of small frames costs one syscall. */
  cork(): void;
  uncork(): void;
  /** Ends the stream after what is buffered (with a last frame). */
  end(frame?: string): void;
  /** Drops the connection and what it holds unsent. */
  cut(): void;
  onClose(listener: () => void): void;
}

/** Refuses a new stream (throws the limit error) while the replica holds too many unsent stream bytes. */
export interface StreamAdmission {
  admit(): void;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { kind: 'json', status, body, headers };
}
