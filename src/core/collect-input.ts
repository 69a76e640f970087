import { randomBytes } from 'node:crypto';
import { ErrorCode, ShimError } from './errors.js';
import { ERROR_ANSWER, inputAllowed } from './input-responses.js';
import type { InputRequest, TaskRecord } from './task.js';
import { waitForTask } from './task-watch.js';
import type { TaskStore } from '../store/task-store.js';

/** A Map: the method is the upstream's (see ANSWER_SCHEMAS). */
const KEY_PREFIX: ReadonlyMap<string, string> = new Map([
  ['elicitation/create', 'elicit'],
  ['sampling/createMessage', 'sample'],
  ['roots/list', 'roots'],
]);

/** A fresh input key: unique for the task's whole life (the store also refuses reuse). */
function newInputKey(method: string): string {
  return `${KEY_PREFIX.get(method) ?? 'input'}-${randomBytes(4).toString('hex')}`;
}

const CARRIED_ID = /-u([A-Za-z0-9_-]+)$/;

/**
 * A fresh input key that carries the id the request had where it came from (an upstream's
 * JSON-RPC id), so that whichever process later holds the work can answer that very request.
 */
export function keyCarryingId(method: string, id: string | number): string {
  return `${newInputKey(method)}-u${Buffer.from(JSON.stringify(id)).toString('base64url')}`;
}

/** The id `keyCarryingId` put in `key`, or undefined for any other key. */
export function carriedId(key: string): string | number | undefined {
  const encoded = CARRIED_ID.exec(key)?.[1];
  if (!encoded) return undefined;
  try {
    const id: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parks one upstream request (elicitation, sampling, roots) in the task as an outstanding
 * `inputRequests` entry and waits for its answer, which may arrive on any replica through any
 * wire. Errors are the answer to the upstream: the pool turns them into JSON-RPC errors.
 * `onParked` runs once the request is visible in the store; `key` replaces the fresh key.
 */
export async function collectInput(
  store: TaskStore,
  task: TaskRecord,
  request: InputRequest,
  signal: AbortSignal,
  onParked?: () => void,
  key: string = newInputKey(request.method),
): Promise<Record<string, unknown>> {
  if (!inputAllowed(request, task.clientCapabilities)) {
    throw new ShimError(ErrorCode.MethodNotFound, `The client did not declare support for ${request.method}`);
  }
  if (!(await store.requestInput(task.taskId, key, request, Date.now()))) {
    throw new ShimError(ErrorCode.InvalidRequest, 'The task is no longer running');
  }
  onParked?.();
  return awaitInput(store, task, key, signal);
}

/** Waits for the answer to the outstanding request `key` (one this process parked, or another one). */
export async function awaitInput(store: TaskStore, task: TaskRecord, key: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const settled = await waitForTask(store, task.taskId, (t) => key in t.inputResponses, {
    timeoutMs: Math.max(1, task.createdAt + task.ttlMs - Date.now()),
    signal,
  });
  const answer = settled?.inputResponses[key];
  if (answer === undefined) {
    if (!signal.aborted) throw new ShimError(ErrorCode.InvalidRequest, 'The task ended before the input was answered');
    await store.withdrawInput(task.taskId, key, Date.now()).catch(() => undefined);
    throw new ShimError(-32001, 'Input request withdrawn');
  }
  const failure = (answer as Record<string, unknown> | null)?.[ERROR_ANSWER];
  if (failure && typeof failure === 'object') {
    const { code, message, data } = failure as { code: number; message: string; data?: unknown };
    throw new ShimError(code, message, data);
  }
  return answer as Record<string, unknown>;
}
