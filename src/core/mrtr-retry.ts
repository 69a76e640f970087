import { isDeepStrictEqual } from 'node:util';
import type { CallContext, CallRequest } from './call.js';
import { InvalidParamsError } from './errors.js';
import { checkAnswer } from './input-responses.js';
import { decodeRequestState, type RequestState } from './request-state.js';
import type { AnswerOutcome, TaskStore } from '../store/task-store.js';

export const UNKNOWN_STATE = 'requestState is unknown or expired';

/** The decoded `requestState` of a retry, or -32602 when the shim did not hand it out. */
export function requestStateOf(requestState: string): RequestState {
  const state = decodeRequestState(requestState);
  if (!state) throw new InvalidParamsError(UNKNOWN_STATE);
  return state;
}

/**
 * Finds the record a retry's `requestState` names (scoped to the caller, and bound to the original
 * name and arguments) and applies its answers in one atomic step. A malformed answer for an
 * outstanding key refuses the whole retry.
 */
export async function answerRetry(
  store: TaskStore,
  ctx: CallContext,
  call: CallRequest,
  recordId: string,
  inputResponses: Record<string, unknown>,
): Promise<AnswerOutcome> {
  const task = await store.get(recordId, ctx.principal);
  if (!task || task.status === 'cancelled') throw new InvalidParamsError(UNKNOWN_STATE);
  if (task.tool !== call.name || !isDeepStrictEqual(task.arguments, call.arguments)) {
    throw new InvalidParamsError('requestState does not belong to this request: retry with the original name and arguments');
  }
  for (const [key, answer] of Object.entries(inputResponses)) {
    // Keys come from the wire: only an outstanding request (an own property) is checked.
    const request = Object.hasOwn(task.inputRequests, key) ? task.inputRequests[key] : undefined;
    const problem = request && checkAnswer(request, answer);
    if (problem) throw new InvalidParamsError(`Invalid answer for input request '${key}': ${problem}`, { key });
  }
  const answered = await store.answerInput(task.taskId, ctx.principal, inputResponses, Date.now());
  if (!answered) throw new InvalidParamsError(UNKNOWN_STATE);
  return answered;
}

