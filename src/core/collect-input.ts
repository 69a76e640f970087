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

/**
 * Parks one upstream request (elicitation, sampling, roots) in the task as an outstanding
 * `inputRequests` entry and waits for its answer, which may arrive on any replica through any
 * wire. Errors are the answer to the upstream: the pool turns them into JSON-RPC errors.
 * `onParked` runs once the request is visible in the store.
 */
export async function collectInput(
  store: TaskStore,
  task: TaskRecord,
  request: InputRequest,
  signal: AbortSignal,
  onParked?: () => void,
): Promise<Record<string, unknown>> {
  if (!inputAllowed(request, task.clientCapabilities)) {
    throw new ShimError(ErrorCode.MethodNotFound, `The client did not declare support for ${request.method}`);
  }
  const key = newInputKey(request.method);
  if (!(await store.requestInput(task.taskId, key, request, Date.now()))) {
    throw new ShimError(ErrorCode.InvalidRequest, 'The task is no longer running');
  }
  onParked?.();
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
