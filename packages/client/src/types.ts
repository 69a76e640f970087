import type { TaskStatus } from './wire.js';

/**
 * The public shapes of the client helper. They describe what the helper hands to its caller
 * after validating the server's answers (see shapes.ts), never the raw wire messages.
 */

export type { TaskStatus };

/** A tool result as the caller sees it: the server's `CallToolResult` without `resultType`. */
export type CallToolResult = {
  content: unknown[];
  isError?: boolean;
  structuredContent?: unknown;
  [k: string]: unknown;
};

/** One outstanding request of a task (`elicitation/create`, `sampling/createMessage`, `roots/list`). */
export type TaskInputRequest = { method: string; params: Record<string, unknown> };

/** The JSON-RPC error object a `failed` task carries. */
export type TaskError = { code: number; message: string; data?: unknown };

/** A task as `tasks/get` (or a `notifications/tasks` push) last showed it. */
export type TaskSnapshot = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Lifetime from `createdAt`; `null` means unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** `input_required` only: every request still outstanding, by key. */
  inputRequests?: Record<string, TaskInputRequest>;
  /** `completed` only. */
  result?: CallToolResult;
  /** `failed` only. */
  error?: TaskError;
};

export type TaskStatusUpdate = TaskSnapshot & {
  phase: 'working' | 'input_required' | 'cancellation_requested' | 'completed' | 'failed' | 'cancelled';
};

/**
 * Answers one input request. The return value is sent as is in `tasks/update`, or in the retried
 * `tools/call` when the call asks before it answers or becomes a task (MRTR; `task` is then
 * undefined). For a form elicitation: `{ action: 'accept', content: {...} }`, `{ action: 'decline' }`, ...
 */
export type InputRequestHandler = (
  request: { key: string; method: string; params: Record<string, unknown> },
  task: TaskSnapshot | undefined,
) => Promise<unknown> | unknown;

/** Options of the one-request calls (`getTask`, `cancelTask`). */
export interface SignalOptions {
  /** Aborting abandons the request (the answer is not awaited; nothing is cancelled on the server). */
  signal?: AbortSignal;
}

export interface CallToolOptions {
  /** Aborting before the task exists abandons the request; afterwards it sends `tasks/cancel` once. */
  signal?: AbortSignal;
  /** Overrides the client-level handler for this call. */
  onInputRequest?: InputRequestHandler;
  onTaskCreated?(task: TaskSnapshot): void;
  onStatus?(update: TaskStatusUpdate): void;
}

/** What a TaskIdStore keeps per task: enough to find the task again after a restart. */
export type TaskIdEntry = { taskId: string; tool: string; createdAt: string };

export interface TaskIdStore {
  save(entry: TaskIdEntry): Promise<void>;
  remove(taskId: string): Promise<void>;
  list(): Promise<TaskIdEntry[]>;
}

export type HeadersOption =
  | Record<string, string>
  | (() => Record<string, string> | Promise<Record<string, string>>);

export interface TasksClientOptions {
  /** The MCP endpoint. */
  url: string;
  fetch?: typeof fetch;
  /** Extra headers on every request (e.g. Authorization); a function is called per request. */
  headers?: HeadersOption;
  clientInfo?: { name: string; version: string };
  /** Declared on every request (e.g. `{ elicitation: {} }`); the tasks extension is always added. Default `{}`. */
  capabilities?: Record<string, unknown>;
  /** Default: a MemoryTaskIdStore. */
  taskStore?: TaskIdStore;
  /**
   * Default handler for every call. Without one (and without a call-level one), a task that asks
   * for input makes the call reject with NoInputHandlerError naming the key; the task is left
   * running and stays in the TaskIdStore. Declare the matching capability (e.g. `elicitation`),
   * or the server never surfaces the request.
   */
  onInputRequest?: InputRequestHandler;
  /** Use `subscriptions/listen` push; polling stays on at a slow rate as the fallback. Default false. */
  listen?: boolean;
  /** Cap of the poll backoff. Default 30 000. */
  maxPollIntervalMs?: number;
}
