import type { InputRequest, JsonRpcErrorObject } from './task.js';

/** The core's view of the upstream: it calls tools and lists them, without knowing the transport. */
export interface ToolInvoker {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      timeoutMs: number;
      onInput?: (request: InputRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;
      onProgress?: (message: string) => void;
    },
  ): Promise<Record<string, unknown>>;
}

export interface ToolInfo {
  name: string;
  inputSchema?: { properties?: Record<string, unknown> };
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
}

export interface ToolCatalog {
  /** The upstream's tool, from a short-lived cache that refreshes on a miss. */
  get(name: string): Promise<ToolInfo | undefined>;
  /**
   * Whether the upstream declares task-augmented `tools/call`, as of the listing `get` last read
   * (false until the upstream first answered: nothing is known about its tools either).
   */
  declaresTasks(): boolean;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Hands a created task to the workers. */
export interface TaskQueue {
  enqueue(taskId: string): Promise<void>;
}

/** How a task backed by an upstream task ended, ready for the store. */
export type NativeOutcome =
  | { status: 'completed'; result: Record<string, unknown> }
  | { status: 'failed'; error: JsonRpcErrorObject; statusMessage: string }
  | { status: 'cancelled'; statusMessage: string };

/** An input request of the upstream task; `id` is the upstream's JSON-RPC id (2025-11-25) or its `inputRequests` key (SEP-2663). */
export type NativeInputHandler = (request: InputRequest, id: string | number, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** What the worker asks of an upstream task: each hook writes to the task's record. */
export interface NativeHooks {
  /** Aborts when the task ended elsewhere (a cancel that ended it at once, or its grace ran out): the cancel goes upstream. */
  signal: AbortSignal;
  /**
   * Aborts when a client asked to cancel the task (on any replica, also before this run): the
   * cancel goes upstream and the outcome is the upstream's answer (docs/architecture.md, "Native execution").
   */
  cancel: AbortSignal;
  /** Epoch ms: the task's expiry. */
  deadline: number;
  onInput: NativeInputHandler;
  onStatusMessage: (message: string) => void;
  /** What the task's client declared: a SEP-2663 upstream is told which input kinds it may ask for. */
  clientCapabilities?: Record<string, unknown>;
}

export interface NativeRun extends NativeHooks {
  tool: string;
  args: Record<string, unknown>;
  ttlMs: number;
  /** The upstream task exists: record it. False when the task ended meanwhile (the upstream task is then cancelled). */
  onBound: (upstreamTaskId: string, upstreamSessionId: string) => Promise<boolean>;
}

export interface NativeResume extends NativeHooks {
  upstreamTaskId: string;
  upstreamSessionId: string;
  /** Requests the lost mirror received and parked: their answers go back to the upstream under its ids. */
  outstanding: ReadonlyArray<{ id: string | number; answer: (signal: AbortSignal) => Promise<Record<string, unknown>> }>;
}

/** The upstream's own tasks (a 2025-11-25 task server or a SEP-2663 server), as the worker uses them. */
export interface UpstreamTasks {
  /**
   * True when the upstream runs this tool's tasks itself (docs/architecture.md, "Native execution"
   * and "SEP-2663 execution"): the record is then backed by the upstream's task.
   */
  isNative(tool: string): Promise<boolean>;
  run(run: NativeRun): Promise<NativeOutcome>;
  /** Rejoins the upstream session of a mirror whose replica died and follows the task to its end. */
  resume(resume: NativeResume): Promise<NativeOutcome>;
  /**
   * The record ended while no mirror ran (its cancel's grace passed): the cancel still goes to the
   * upstream task, on its session (a SEP-2663 task, `upstreamSessionId` empty: statelessly), which
   * then ends. Best effort, bounded by the cancel grace.
   */
  abandon(upstreamTaskId: string, upstreamSessionId: string): Promise<void>;
}
