import { collectInput } from '../core/collect-input.js';
import { ErrorCode, UpstreamRpcError } from '../core/errors.js';
import type { ToolInvoker } from '../core/ports.js';
import { isTerminal, type TaskRecord } from '../core/task.js';
import type { TaskStore } from '../store/task-store.js';
import type { Job } from './work-queue.js';

export interface TaskRunnerOptions {
  store: TaskStore;
  invoker: ToolInvoker;
  /** Tools that may be re-run when the worker that ran them was lost. */
  isIdempotent: (tool: string) => boolean;
  now?: () => number;
}

const CANCELLED = Symbol('task cancelled');

/**
 * Runs one task against the upstream: turns its input requests into `inputRequests`, its
 * progress into `statusMessage`, and its outcome into the terminal status. Aborts the upstream
 * call as soon as the task turns terminal elsewhere (a cancel on any replica).
 */
export class TaskRunner {
  private readonly now: () => number;

  constructor(private readonly options: TaskRunnerOptions) {
    this.now = options.now ?? Date.now;
  }

  readonly process = async (job: Job): Promise<void> => {
    const { store } = this.options;
    const task = await store.load(job.taskId);
    if (!task || isTerminal(task.status)) return;
    if ((job.redelivered || task.startedAt !== undefined) && !this.options.isIdempotent(task.tool)) {
      await store.finish(
        task.taskId,
        {
          status: 'failed',
          error: { code: ErrorCode.InternalError, message: 'Task execution was lost: the worker running it stopped' },
          statusMessage: 'Execution lost when its worker stopped; the tool is not declared idempotent, so it was not re-run.',
        },
        this.now(),
      );
      return;
    }
    await store.markStarted(task.taskId, this.now());
    await this.execute(task);
  };

  private async execute(task: TaskRecord): Promise<void> {
    const { store, invoker } = this.options;
    const abort = new AbortController();
    const unsubscribe = store.subscribe((change) => {
      if (change.taskId === task.taskId && isTerminal(change.status)) abort.abort(CANCELLED);
    });
    const progress = new LatestWins((message) => store.setStatusMessage(task.taskId, message, this.now()));
    try {
      const result = await invoker.callTool(task.tool, task.arguments, {
        signal: abort.signal,
        timeoutMs: Math.max(1, task.createdAt + task.ttlMs - this.now()),
        onInput: (request, signal) => collectInput(store, task, request, signal),
        onProgress: (message) => progress.push(message),
      });
      await progress.drain();
      await store.finish(task.taskId, { status: 'completed', result }, this.now());
    } catch (err) {
      await progress.drain();
      if (abort.signal.aborted) return;
      const error =
        err instanceof UpstreamRpcError
          ? err.toJsonRpc()
          : { code: ErrorCode.InternalError, message: `Upstream call failed: ${err instanceof Error ? err.message : String(err)}` };
      await store.finish(task.taskId, { status: 'failed', error, statusMessage: error.message }, this.now());
    } finally {
      unsubscribe();
    }
  }
}

/** Progress can arrive faster than the store takes writes: keep one write in flight, newest message next. */
class LatestWins {
  private pending: string | undefined;
  private inflight: Promise<void> | undefined;

  constructor(private readonly write: (message: string) => Promise<void>) {}

  push(message: string): void {
    this.pending = message;
    if (!this.inflight) this.inflight = this.flush();
  }

  async drain(): Promise<void> {
    while (this.inflight) await this.inflight;
  }

  private async flush(): Promise<void> {
    while (this.pending !== undefined) {
      const message = this.pending;
      this.pending = undefined;
      await this.write(message).catch(() => undefined);
    }
    this.inflight = undefined;
  }
}
