import type { CallContext, CallOutcome, CallRequest } from './call.js';
import { UpstreamRpcError } from './errors.js';
import { answerRetry } from './mrtr-retry.js';
import { encodeRequestState } from './request-state.js';
import type { Cancels } from './cancels.js';
import type { TaskRecord } from './task.js';
import { waitForTask } from './task-watch.js';
import type { TaskStore } from '../store/task-store.js';

/** How a call that may become a task runs before the client learns of the task. */
export interface CallWindow {
  /** How long each round waits for the call to end or to ask for input. */
  windowMs: number;
  /** `auto`: a call that ends inside the window answers plainly. `required`: it answers the task handle. */
  answerPlainly: boolean;
}

/**
 * Input before a task exists (docs/architecture.md, "Input before the task exists"; SEP-2663
 * with SEP-2322 MRTR): the call is a task from the start, queued and run by any
 * worker, but it is announced only once it outlasts a round's window. Input it asks for inside the
 * window goes back as an MRTR `InputRequiredResult` whose `requestState` names the task; the retry
 * (on any replica) answers through the store exactly as `tasks/update` would, and starts the next
 * round. So the task keeps everything a task has (limits, leases, cancellation, progress) from
 * the first round on, and the upstream call continues on whichever worker holds it.
 */
export class PreTaskCalls {
  constructor(
    private readonly store: TaskStore,
    private readonly cancels: Cancels,
  ) {}

  /** The first round: `task` was just created for this call. */
  start(ctx: CallContext, call: CallRequest, task: TaskRecord, window: CallWindow): Promise<CallOutcome> {
    return this.round(ctx, call, task, window);
  }

  /** A retry carrying the answers to the inputs a round asked for. */
  async resume(ctx: CallContext, call: CallRequest, taskId: string, inputResponses: Record<string, unknown>, window: CallWindow): Promise<CallOutcome> {
    const answered = await answerRetry(this.store, ctx, call, taskId, inputResponses);
    return this.round(ctx, call, answered.task, window);
  }

  private async round(ctx: CallContext, call: CallRequest, task: TaskRecord, window: CallWindow): Promise<CallOutcome> {
    const signal = call.clientGone?.();
    // Input still outstanding after a partial answer is asked again at once.
    const seen =
      task.status === 'input_required'
        ? task
        : await waitForTask(this.store, task.taskId, (t) => t.status === 'input_required', { timeoutMs: window.windowMs, signal });
    if (signal?.aborted) {
      await this.cancels.cancel(ctx.principal, task.taskId, 'The client left before the task was announced.');
      return { kind: 'task', task };
    }
    if (seen?.status === 'input_required') {
      return { kind: 'input', inputRequests: seen.inputRequests, requestState: encodeRequestState({ recordId: task.taskId, phase: 'task' }) };
    }
    if (window.answerPlainly && seen?.status === 'completed' && seen.result) return { kind: 'result', result: seen.result };
    if (window.answerPlainly && seen?.status === 'failed' && seen.error) throw new UpstreamRpcError(seen.error.code, seen.error.message, seen.error.data);
    // The wires render the handle as the creation snapshot: a CreateTaskResult always reads `working`.
    return { kind: 'task', task };
  }
}
