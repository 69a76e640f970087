import type { CallContext, CallOutcome, CallRequest } from './call.js';
import type { Cancels } from './cancels.js';
import { collectInput } from './collect-input.js';
import { ErrorCode, InvalidParamsError, ShimError } from './errors.js';
import { declaresInput, inputAllowed } from './input-responses.js';
import type { ToolInvoker } from './ports.js';
import type { CallWindow } from './pre-task-call.js';
import { encodeRequestState } from './request-state.js';
import { RunningCall } from './running-call.js';
import type { TaskIntake } from './task-intake.js';
import type { NewTask, TaskRecord } from './task.js';
import { UNKNOWN_STATE } from './mrtr-retry.js';
import type { TaskStore } from '../store/task-store.js';

export interface WindowedCallsOptions {
  store: TaskStore;
  intake: TaskIntake;
  invoker: ToolInvoker;
  cancels: Cancels;
  now: () => number;
  /** The TTL the call's task would have: the call may run that long. */
  ttlMs: (call: CallRequest) => number;
}

/**
 * A call that may become a task (`auto`; `required` for a client that can answer input) runs in
 * the replica that received it, and becomes a durable task only when it must
 * (docs/decisions/0032-durable-when-it-must-be.md): when it outlasts its window, or when it asks
 * for input. Until then no task id exists anywhere: a call that ends inside its window costs what
 * a synchronous call costs, and a replica lost inside the window is an ordinary failed request.
 * Made durable, the record is created with its job leased to this replica, and the call goes on
 * as that job (TaskIntake.adopt): from then on it is a task like any other.
 */
export class WindowedCalls {
  constructor(private readonly options: WindowedCallsOptions) {}

  /**
   * The first round of the call; `newTask` makes the record it becomes if it must (created when
   * the call arrived, `createdAt`: its TTL counts from then).
   */
  start(ctx: CallContext, call: CallRequest, newTask: (createdAt: number) => NewTask, window: CallWindow): Promise<CallOutcome> {
    const { store, intake, invoker, cancels, now, ttlMs } = this.options;
    const startedAt = now();
    let latest: string | undefined;
    let durable: Promise<TaskRecord> | undefined;
    let inputParked: (() => void) | undefined;
    const becomeTask = (): Promise<TaskRecord> =>
      (durable ??= intake.adopt({ ...newTask(startedAt), startedAt, statusMessage: latest }, running));
    const running: RunningCall = new RunningCall(invoker, call.name, call.arguments, ttlMs(call), {
      onProgress: (message) => {
        latest = message;
      },
      onInput: async (request, signal) => {
        // Refused before anything is stored: a task only to say no would cost a record.
        if (!inputAllowed(request, ctx.clientCapabilities)) throw new ShimError(ErrorCode.MethodNotFound, `The client did not declare support for ${request.method}`);
        return collectInput(store, await becomeTask(), request, signal, () => inputParked?.());
      },
    }, declaresInput(ctx.clientCapabilities));
    const gone = call.clientGone?.();

    return new Promise<CallOutcome>((resolve, reject) => {
      let done = false;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        clearTimeout(timer);
        gone?.removeEventListener('abort', left);
        inputParked = undefined;
        return true;
      };
      const asTask = (): void => {
        becomeTask().then(
          (record) => resolve({ kind: 'task', task: record }),
          (err: unknown) => {
            // Nobody will ever read what the call answers: it stops.
            running.cancel();
            reject(err);
          },
        );
      };
      const timer = setTimeout(() => {
        if (finish()) asTask();
      }, window.windowMs);
      const left = (): void => {
        if (!finish()) return;
        if (!durable) {
          running.cancel();
          reject(new ShimError(ErrorCode.RequestCancelled, 'The client left before the call ended'));
          return;
        }
        durable.then(async (record) => {
          await cancels.cancel(ctx.principal, record.taskId, 'The client left before the task was announced.');
          resolve({ kind: 'task', task: record });
        }, reject);
      };
      if (gone?.aborted) left();
      else gone?.addEventListener('abort', left, { once: true });
      inputParked = () => {
        if (!finish()) return;
        durable!.then(async (record) => {
          const seen = await store.load(record.taskId);
          if (!seen) throw new InvalidParamsError(UNKNOWN_STATE);
          resolve({ kind: 'input', inputRequests: seen.inputRequests, requestState: encodeRequestState({ recordId: record.taskId, phase: 'task' }) });
        }).catch(reject);
      };
      running.result.then(
        (result) => {
          if (!finish()) return;
          if (window.answerPlainly) resolve({ kind: 'result', result });
          else asTask();
        },
        (err: unknown) => {
          if (!finish()) return;
          if (window.answerPlainly) reject(err);
          else asTask();
        },
      );
    });
  }
}
