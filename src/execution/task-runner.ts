import { randomBytes } from 'node:crypto';
import { McpError, ErrorCode as SdkErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, UpstreamRpcError } from '../core/errors.js';
import { ERROR_ANSWER, inputAllowed } from '../core/input-responses.js';
import type { ToolInvoker } from '../core/ports.js';
import { isTerminal, type InputRequest, type TaskRecord } from '../core/task.js';
import type { TaskStore } from '../store/task-store.js';
import { waitForTask } from '../core/task-watch.js';
import type { Job } from './work-queue.js';

export interface TaskRunnerOptions {
  store: TaskStore;
  invoker: ToolInvoker;
  /** Tools that may be re-run when the worker that ran them was lost. */
  isIdempotent: (tool: string) => boolean;
  now?: () => number;
}

const INPUT_KEY_PREFIX: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicit',
  'sampling/createMessage': 'sample',
  'roots/list': 'roots',
};

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
        onInput: (request, signal) => this.collectInput(task, request, signal),
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

  /** Parks the upstream's request in the task and waits for the answer from any replica. */
  private async collectInput(task: TaskRecord, request: InputRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const { store } = this.options;
    if (!inputAllowed(request, task.clientCapabilities)) {
      throw new McpError(SdkErrorCode.MethodNotFound, `The client did not declare support for ${request.method}`);
    }
    const key = `${INPUT_KEY_PREFIX[request.method] ?? 'input'}-${randomBytes(4).toString('hex')}`;
    if (!(await store.requestInput(task.taskId, key, request, this.now()))) {
      throw new McpError(SdkErrorCode.InvalidRequest, 'The task is no longer running');
    }
    const settled = await waitForTask(store, task.taskId, (t) => key in t.inputResponses, {
      timeoutMs: Math.max(1, task.createdAt + task.ttlMs - this.now()),
      signal,
    });
    const answer = settled?.inputResponses[key];
    if (answer === undefined) {
      if (!signal.aborted) throw new McpError(SdkErrorCode.InvalidRequest, 'The task ended before the input was answered');
      await store.withdrawInput(task.taskId, key, this.now()).catch(() => undefined);
      throw new McpError(SdkErrorCode.RequestTimeout, 'Input request withdrawn');
    }
    const failure = answerError(answer);
    if (failure) throw new McpError(failure.code, failure.message, failure.data);
    return answer as Record<string, unknown>;
  }
}

/** A legacy client may answer a pushed request with a JSON-RPC error; it reaches the work as that input's failure. */
function answerError(answer: unknown): { code: number; message: string; data?: unknown } | undefined {
  const error = (answer as Record<string, unknown> | null)?.[ERROR_ANSWER];
  return error && typeof error === 'object' ? (error as { code: number; message: string; data?: unknown }) : undefined;
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
