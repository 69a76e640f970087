import { isTerminal } from './wire.js';
import { McpHttpError, TaskCancelledError, TaskFailedError } from './errors.js';
import { InputAnswers } from './input-answers.js';
import { nextPollDelay } from './poll-schedule.js';
import { InvalidAnswerError } from './shapes.js';
import type { TaskListen } from './task-listen.js';
import { Wakeup } from './wakeup.js';
import type { CallToolOptions, CallToolResult, InputRequestHandler, TaskSnapshot, TaskStatusUpdate } from './types.js';

/** What the driver needs from the client: the three task methods, the id store, and optionally push. */
export interface DriverDeps {
  getTask(taskId: string): Promise<TaskSnapshot>;
  updateTask(taskId: string, inputResponses: Record<string, unknown>): Promise<void>;
  cancelTask(taskId: string): Promise<void>;
  /** Drops the id from the TaskIdStore once the task is terminal. */
  forget(taskId: string): Promise<void>;
  listen?(taskId: string, onTask: (task: TaskSnapshot) => void, onActiveChange: () => void): TaskListen;
  maxPollIntervalMs: number;
  /** Used when the call gives no handler. */
  onInputRequest?: InputRequestHandler;
  random?: () => number;
  now?: () => number;
}

/** Consecutive transient `tasks/get` failures (network, 5xx, 429) tolerated before giving up. */
export const MAX_TRANSIENT_POLL_FAILURES = 3;

/**
 * Drives one task to a terminal status: polls `tasks/get` (or takes pushed snapshots), hands
 * each new input request to the handler and sends the answers back, turns an abort into one
 * `tasks/cancel`, and settles with the result or a TaskFailedError / TaskCancelledError.
 */
export async function driveTask(initial: TaskSnapshot, deps: DriverDeps, options: CallToolOptions = {}): Promise<CallToolResult> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const { taskId } = initial;
  const { signal } = options;
  const wakeup = new Wakeup();
  const answers = new InputAnswers(options.onInputRequest ?? deps.onInputRequest, wakeup.wake);

  // A CreateTaskResult never carries `result`: a task created already completed is read once more.
  let current = initial.status === 'completed' && !initial.result ? await deps.getTask(taskId) : initial;
  let pushed: TaskSnapshot | undefined;
  let fresh = true;
  let lastSignature: string | undefined;
  let unchangedPolls = 0;
  let transientFailures = 0;
  let observedAt = now();
  let jitterDraw = random();
  let cancelSent = false;

  const emit = (task: TaskSnapshot): void => {
    if (!options.onStatus) return;
    const phase: TaskStatusUpdate['phase'] = !isTerminal(task.status) && cancelSent ? 'cancellation_requested' : task.status;
    options.onStatus({ ...task, phase });
  };

  signal?.addEventListener('abort', wakeup.wake);
  const listen = deps.listen?.(
    taskId,
    (task) => {
      pushed = pushed ? newest(pushed, task) : task;
      wakeup.wake();
    },
    wakeup.wake,
  );

  try {
    for (;;) {
      if (fresh) {
        const signature = signatureOf(current);
        if (signature !== lastSignature) {
          lastSignature = signature;
          unchangedPolls = 0;
          emit(current);
        } else if (current.status === 'working') {
          unchangedPolls++;
        }
        if (isTerminal(current.status)) {
          await deps.forget(taskId);
          return settle(current);
        }
      }
      if (signal?.aborted && !cancelSent) {
        cancelSent = true;
        emit(current);
        await deps.cancelTask(taskId);
      }
      // Once a cancel is on its way, nobody is asked anything more.
      if (fresh && current.status === 'input_required' && !cancelSent) answers.offer(current);
      fresh = false;
      if (answers.failed) throw answers.failed.error;
      const batch = cancelSent ? undefined : answers.take();
      if (batch) await deps.updateTask(taskId, batch);

      const delay = nextPollDelay(
        { pollIntervalMs: current.pollIntervalMs, unchangedPolls, pushActive: listen?.active ?? false },
        deps.maxPollIntervalMs,
        () => jitterDraw,
      );
      const due = observedAt + delay;
      if (pushed === undefined && due > now()) await wakeup.sleep(due - now());
      if (pushed !== undefined) {
        current = newest(current, pushed);
        pushed = undefined;
      } else if (now() >= due) {
        try {
          current = newest(current, await deps.getTask(taskId));
          transientFailures = 0;
        } catch (err) {
          if (!isTransient(err) || ++transientFailures > MAX_TRANSIENT_POLL_FAILURES) throw err;
        }
      } else {
        // Woken for an answer, an abort or a listen change: act on it, keep the poll schedule.
        continue;
      }
      fresh = true;
      observedAt = now();
      jitterDraw = random();
    }
  } finally {
    signal?.removeEventListener('abort', wakeup.wake);
    listen?.close();
  }
}

function settle(task: TaskSnapshot): CallToolResult {
  switch (task.status) {
    case 'completed':
      if (!task.result) throw new InvalidAnswerError(`task ${task.taskId}`, 'a completed task has no result');
      return task.result;
    case 'failed':
      throw new TaskFailedError(task.taskId, task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' });
    default:
      throw new TaskCancelledError(task.taskId, task.statusMessage);
  }
}

/** What counts as a change: status, message, update time, outstanding keys. */
function signatureOf(task: TaskSnapshot): string {
  return JSON.stringify([task.status, task.statusMessage ?? null, task.lastUpdatedAt, Object.keys(task.inputRequests ?? {}).sort()]);
}

/** The later of two views of a task (a push and a poll may cross). Terminal never goes back. */
export function newest(a: TaskSnapshot, b: TaskSnapshot): TaskSnapshot {
  if (isTerminal(a.status) !== isTerminal(b.status)) return isTerminal(a.status) ? a : b;
  const ta = Date.parse(a.lastUpdatedAt);
  const tb = Date.parse(b.lastUpdatedAt);
  return Number.isFinite(ta) && Number.isFinite(tb) && ta > tb ? a : b;
}

/** A poll that may work next time: the network, a gateway, a rate limit. */
function isTransient(err: unknown): boolean {
  if (err instanceof McpHttpError) return err.httpStatus >= 500 || err.httpStatus === 429;
  // fetch rejects with a TypeError when the connection fails.
  return err instanceof TypeError;
}
