import type { ClientInfo, InputRequest, TaskRecord, Wire } from './task.js';

/** Who is calling, on which wire, with what declared. Built by the adapter from a verified request. */
export interface CallContext {
  principal: string;
  wire: Wire;
  sessionId?: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: ClientInfo;
}

export type CallOutcome =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'input'; inputRequests: Record<string, InputRequest>; requestState: string }
  | { kind: 'task'; task: TaskRecord }
  | { kind: 'refused'; reason: 'task-required' };

export interface CallRequest {
  name: string;
  arguments: Record<string, unknown>;
  /** This request said it can handle a task. */
  optedIn: boolean;
  /** A legacy client's requested `ttl`; clamped to the configured maximum. */
  requestedTtlMs?: number;
  /**
   * A signal that aborts when the client goes away before the answer, made on the first call: a
   * call that becomes a task never asks for one.
   */
  clientGone?: () => AbortSignal;
  /** An MRTR retry: the `requestState` the shim handed out and the client's answers. */
  retry?: { requestState: string; inputResponses: Record<string, unknown> };
}

