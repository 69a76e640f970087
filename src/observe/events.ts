import type { Wire } from '../core/task.js';
import type { Reply } from '../wire/reply.js';

/**
 * What the shim records about its traffic (docs/dashboard.md). `passthrough` is old-API session
 * traffic the shim forwards to the upstream (including `initialize` and `tools/list`, which it
 * forwards and lightly rewrites); the task wires are the three of docs/architecture.md.
 */
export const OBSERVED_WIRES = ['sep2663', 'mcp-2025-11-25', 'tasks-create', 'passthrough'] as const;
export type ObservedWire = (typeof OBSERVED_WIRES)[number];

/** Everything but `sep2663` is the old API the cutover switches off. */
export function isOldWire(wire: ObservedWire): boolean {
  return wire !== 'sep2663';
}

/** `ok`, a JSON-RPC error code (`-32602`), or `http_<status>` when only the HTTP status tells. */
export type Outcome = 'ok' | `${number}` | `http_${number}`;

export interface RequestEvent {
  wire: ObservedWire;
  /** The JSON-RPC method; `GET`/`DELETE` for bodyless session requests; `response` for a client's answer. */
  method: string;
  /** The tool of a `tools/call` or `tasks/create`. */
  tool?: string;
  clientName?: string;
  clientVersion?: string;
  principal: string;
  outcome: Outcome;
  latencyMs: number;
  protocolVersion?: string;
  /** Epoch ms; default now. */
  at?: number;
  /**
   * The request's params and the shim's answer (absent when the upstream answered), for the
   * request log, which reads them only when it writes a line. Never stored or counted.
   */
  params?: Record<string, unknown>;
  reply?: Reply;
}

export const TASK_EVENTS = ['created', 'completed', 'failed', 'cancelled'] as const;
export type TaskEventKind = (typeof TASK_EVENTS)[number];

export interface TaskEvent {
  kind: TaskEventKind;
  /** For the log; the counts do not use it. */
  taskId?: string;
  wire: Wire;
  tool: string;
  createdAt: number;
  /** `createdAt + ttlMs`: a task not terminal by then counts as expired. */
  expiresAt: number;
  /** Epoch ms of the event. */
  at: number;
}

/**
 * The one hook the request paths call. Implementations never throw and never wait: they count in
 * memory and persist on their own schedule.
 */
export interface Recorder {
  record(event: RequestEvent): void;
  task(event: TaskEvent): void;
  /** A stream (legacy GET or tasks/result, SEP-2663 listen) opened on this replica; call the result when it closes. */
  streamOpened(kind: StreamKind): () => void;
  /** A legacy session made a request on this replica (for the active-sessions gauge). */
  sessionSeen(sessionId: string): void;
}

export type StreamKind = 'legacy-get' | 'legacy-result' | 'listen';

export function outcomeOf(code: number | undefined, httpStatus: number): Outcome {
  if (code !== undefined) return `${code}`;
  return httpStatus < 400 ? 'ok' : `http_${httpStatus}`;
}
