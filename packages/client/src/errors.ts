import type { TaskError } from './types.js';

/** The server answered a request with a JSON-RPC error. */
export class McpRequestError extends Error {
  readonly code: number;
  readonly data?: unknown;
  /** HTTP status of the answer that carried the error (400 for envelope errors, 200 for most handler errors). */
  readonly httpStatus: number;
  /** The JSON-RPC method that failed. */
  readonly method: string;

  constructor(method: string, error: TaskError, httpStatus: number) {
    super(error.message);
    this.name = 'McpRequestError';
    this.method = method;
    this.code = error.code;
    if (error.data !== undefined) this.data = error.data;
    this.httpStatus = httpStatus;
  }
}

/** The server answered with an HTTP error that carries no JSON-RPC error (401, 403, 502 from a proxy, ...). */
export class McpHttpError extends Error {
  readonly httpStatus: number;
  readonly method: string;
  /** The start of the response body, for diagnostics. */
  readonly body: string;

  constructor(method: string, httpStatus: number, statusText: string, body: string) {
    super(`${method}: HTTP ${httpStatus}${statusText ? ` ${statusText}` : ''}${body ? `: ${body}` : ''}`);
    this.name = 'McpHttpError';
    this.method = method;
    this.httpStatus = httpStatus;
    this.body = body;
  }
}

/** The task ended `failed`: the work raised a JSON-RPC error (a tool's `isError` result is not a failure). */
export class TaskFailedError extends Error {
  readonly taskId: string;
  readonly code: number;
  readonly data?: unknown;

  constructor(taskId: string, error: TaskError) {
    super(error.message);
    this.name = 'TaskFailedError';
    this.taskId = taskId;
    this.code = error.code;
    if (error.data !== undefined) this.data = error.data;
  }
}

/** The task ended `cancelled`. */
export class TaskCancelledError extends Error {
  readonly taskId: string;

  constructor(taskId: string, statusMessage?: string) {
    super(`Task ${taskId} was cancelled${statusMessage ? `: ${statusMessage}` : ''}`);
    this.name = 'TaskCancelledError';
    this.taskId = taskId;
  }
}

/** Why `tasksClientFor` cannot make a helper for a client; stable across releases. */
export type TasksClientForErrorCode = 'not-connected' | 'unsupported-transport' | 'options-after-create';

/** `tasksClientFor` was given a client it cannot speak for: `code` says which case. */
export class TasksClientForError extends Error {
  readonly code: TasksClientForErrorCode;

  constructor(code: TasksClientForErrorCode, message: string) {
    super(message);
    this.name = 'TasksClientForError';
    this.code = code;
  }
}
