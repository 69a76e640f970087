import { awaitInput, carriedId, collectInput, keyCarryingId } from '../core/collect-input.js';
import { changeFanOut } from '../core/change-fan-out.js';
import { ErrorCode, UnavailableError, UpstreamRpcError } from '../core/errors.js';
import { declaresInput } from '../core/input-responses.js';
import type { NativeHooks, NativeOutcome, NativeResume, ToolInvoker, UpstreamTasks } from '../core/ports.js';
import type { RunningCall } from '../core/running-call.js';
import { isTerminal, type TaskRecord } from '../core/task.js';
import type { TaskStore } from '../store/task-store.js';
import type { HeldJobRunner } from './intake.js';
import type { Job } from './work-queue.js';

export interface TaskRunnerOptions {
  store: TaskStore;
  invoker: ToolInvoker;
  /** The upstream's own tasks: tools it runs as tasks are executed natively (their record mirrors the upstream task). */
  native?: UpstreamTasks;
  /** Tools that may be re-run when the worker that ran them was lost. */
  isIdempotent: (tool: string) => boolean;
  now?: () => number;
  /** First pause before retrying a store write that failed because Redis was unreachable. */
  retryBaseMs?: number;
}

const CANCELLED = Symbol('task cancelled');
/** Resolves when `signal` aborts (never, for one that never does). */
function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
/**
 * An idempotent task is re-run once after its worker was lost. Lost again, it is failed: a call
 * that kills its worker would otherwise take down one replica after another.
 */
const MAX_RERUNS = 1;
/**
 * A native task's mirror resumes after its worker was lost; lost this often, the task is failed:
 * something in mirroring it kills its workers.
 */
const MAX_RESUMES = 3;
/** How long a job waits for Redis to read its task before giving up (the queue then ends the job; its task expires with its TTL). */
const LOAD_RETRY_MS = 60_000;

/**
 * Runs one task against the upstream: turns its input requests into `inputRequests`, its
 * progress into `statusMessage`, and its outcome into the terminal status. Aborts the upstream
 * call as soon as the task turns terminal elsewhere (a cancel on any replica).
 */
export class TaskRunner implements HeldJobRunner {
  private readonly now: () => number;

  constructor(private readonly options: TaskRunnerOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Runs the job until its task ends, or until `released` aborts (its replica lets go of it): then
   * it returns at once and writes nothing more, and whatever of it still runs (an upstream call,
   * a mirror) is cut when the replica closes its upstream clients. A mirror's record keeps its
   * upstream task and session, so that another replica resumes it.
   */
  readonly process = async (job: Job, released: AbortSignal = new AbortController().signal): Promise<void> => {
    const running = this.run(job, released);
    // What runs on after a release ends unobserved: its failure is the cut, not the task's.
    running.catch(() => undefined);
    await Promise.race([running, whenAborted(released)]);
  };

  private async run(job: Job, released: AbortSignal): Promise<void> {
    const { store } = this.options;
    const task = await this.persist(job.taskId, this.now() + LOAD_RETRY_MS, () => store.load(job.taskId), released);
    if (!task) return;
    if (isTerminal(task.status)) {
      // Cancelled while no mirror ran (its replica died): the upstream task still runs and is told now.
      if (task.status === 'cancelled' && task.upstreamTaskId !== undefined && job.lostRuns > 0 && this.options.native) {
        await this.options.native.abandon(task.upstreamTaskId, task.upstreamSessionId ?? '');
      }
      return;
    }
    const deadline = task.createdAt + task.ttlMs;
    // The upstream task runs on without us: another mirror picks it up where the lost one stopped.
    if (task.upstreamTaskId !== undefined && this.options.native && job.lostRuns <= MAX_RESUMES) {
      await this.resumeNative(task, this.options.native, released);
      return;
    }
    const lost = job.lostRuns > 0 || task.startedAt !== undefined;
    const rerun = lost && this.options.isIdempotent(task.tool) && job.lostRuns <= MAX_RERUNS;
    if (lost && !rerun) {
      const statusMessage = this.options.isIdempotent(task.tool)
        ? 'Execution lost when its worker stopped, again after a re-run; it was not re-run another time.'
        : 'Execution lost when its worker stopped; the tool is not declared idempotent, so it was not re-run.';
      await this.persist(task.taskId, deadline, () =>
        store.finish(
          task.taskId,
          { status: 'failed', error: { code: ErrorCode.InternalError, message: 'Task execution was lost: the worker running it stopped' }, statusMessage },
          this.now(),
        ),
      );
      return;
    }
    // A re-run asks its own questions: the lost run's unanswered ones would keep the task input_required.
    for (const key of Object.keys(task.inputRequests)) {
      await this.persist(task.taskId, deadline, () => store.withdrawInput(task.taskId, key, this.now()));
    }
    await this.persist(task.taskId, deadline, () => store.markStarted(task.taskId, this.now()));
    await this.runCreated(task, released);
  }

  /** Runs a task whose job this replica holds from its creation (no queue hop: it was never read back). */
  async runCreated(task: TaskRecord, released: AbortSignal): Promise<void> {
    const native = this.options.native;
    if (native && (await native.isNative(task.tool))) await this.executeNative(task, native, released);
    else await this.execute(task, released);
  }

  /**
   * Goes on with a call that was running before its task existed (an `auto` call past its window,
   * or one that asked for input): from now on its input, progress and outcome are the task's.
   */
  async adopt(task: TaskRecord, call: RunningCall, released: AbortSignal): Promise<void> {
    const { store } = this.options;
    await this.follow(task, released, async (hooks) => {
      call.rebind({ onInput: (request, signal) => collectInput(store, task, request, signal), onProgress: hooks.onStatusMessage });
      const stop = (): void => call.cancel();
      if (hooks.signal.aborted) stop();
      else hooks.signal.addEventListener('abort', stop, { once: true });
      try {
        return await outcomeOf(call.result);
      } finally {
        hooks.signal.removeEventListener('abort', stop);
      }
    });
  }

  /**
   * A store call the task's outcome depends on, retried while Redis is unreachable (a restart, a
   * failover) until the task expires: a job that threw would leave the task `working` forever.
   * A released job stops retrying: the task is another replica's to write.
   */
  private async persist<T>(taskId: string, deadline: number, write: () => Promise<T>, released?: AbortSignal): Promise<T> {
    const base = this.options.retryBaseMs ?? 100;
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        const pause = Math.min(base * 2 ** attempt, 5_000);
        if (!(err instanceof UnavailableError) || released?.aborted === true || this.now() + pause >= deadline) {
          throw new Error(`task ${taskId}: store write failed`, { cause: err });
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** Runs a plain call of the tool as the task. */
  private async execute(task: TaskRecord, released: AbortSignal): Promise<void> {
    const { store, invoker } = this.options;
    await this.follow(task, released, (hooks) =>
      outcomeOf(
        invoker.callTool(task.tool, task.arguments, {
          signal: hooks.signal,
          timeoutMs: Math.max(1, hooks.deadline - this.now()),
          // A task whose client can answer no input tells the upstream so (a call that takes none).
          onInput: declaresInput(task.clientCapabilities) ? (request, signal) => collectInput(store, task, request, signal) : undefined,
          onProgress: hooks.onStatusMessage,
        }),
      ),
    );
  }

  /**
   * Runs a task whose upstream runs it as its own task: the record is bound to the upstream task and
   * follows it (status message, side-channel input, outcome); a cancel of the record goes upstream.
   */
  private async executeNative(task: TaskRecord, native: UpstreamTasks, released: AbortSignal): Promise<void> {
    const { store } = this.options;
    const deadline = task.createdAt + task.ttlMs;
    await this.follow(task, released, (hooks) =>
      native.run({
        ...hooks,
        tool: task.tool,
        args: task.arguments,
        ttlMs: Math.max(1, deadline - this.now()),
        onBound: (upstreamTaskId, upstreamSessionId) =>
          this.persist(task.taskId, deadline, () => store.bindUpstream(task.taskId, upstreamTaskId, upstreamSessionId, this.now())),
      }),
    );
  }

  /** Follows the upstream task of a lost mirror, answering under the upstream's ids what it had parked. */
  private async resumeNative(task: TaskRecord, native: UpstreamTasks, released: AbortSignal): Promise<void> {
    const { store } = this.options;
    const outstanding: Array<NativeResume['outstanding'][number]> = [];
    // Answered keys too: an answer that arrived while no mirror ran has not reached the upstream (a duplicate is ignored there).
    for (const key of [...Object.keys(task.inputRequests), ...Object.keys(task.inputResponses)]) {
      const id = carriedId(key);
      if (id !== undefined) outstanding.push({ id, answer: (signal) => awaitInput(store, task, key, signal) });
    }
    await this.follow(task, released, (hooks) =>
      native.resume({ ...hooks, upstreamTaskId: task.upstreamTaskId!, upstreamSessionId: task.upstreamSessionId ?? '', outstanding }),
    );
  }

  /**
   * Runs `start` with the hooks that write the task's record (input, status message, a cancel
   * from any replica aborting it) and records its outcome, unless the job is released first. A
   * release is not a cancel: the hooks' signal stays quiet, so that a mirror forwards no
   * `tasks/cancel` and the upstream task runs on for the replica that resumes it.
   */
  private async follow(task: TaskRecord, released: AbortSignal, start: (hooks: NativeHooks) => Promise<NativeOutcome>): Promise<void> {
    const { store } = this.options;
    const deadline = task.createdAt + task.ttlMs;
    const abort = new AbortController();
    const cancel = new AbortController();
    // A cancel recorded while no mirror ran (a resumed mirror) is forwarded at once.
    if (task.cancelRequested) cancel.abort();
    // Through the process's fan-out: a change costs a lookup, not a call per running job.
    const unsubscribe = changeFanOut(store).onTask(task.taskId, (change) => {
      if (isTerminal(change.status)) abort.abort(CANCELLED);
      else if (change.cancelRequested) cancel.abort();
    });
    const progress = new LatestWins((message) => store.setStatusMessage(task.taskId, message, this.now()));
    try {
      const running = start({
        signal: abort.signal,
        cancel: cancel.signal,
        deadline,
        onInput: (request, id, signal) => collectInput(store, task, request, signal, undefined, keyCarryingId(request.method, id)),
        onStatusMessage: (message) => {
          if (!released.aborted) progress.push(message);
        },
        clientCapabilities: task.clientCapabilities,
      });
      running.catch(() => undefined);
      const outcome = await Promise.race([running, whenAborted(released).then(() => undefined)]);
      if (outcome === undefined) {
        progress.discard();
        return;
      }
      await progress.drain();
      await this.persist(task.taskId, deadline, () => store.finish(task.taskId, outcome, this.now()), released);
    } catch (err) {
      if (released.aborted) {
        progress.discard();
        return;
      }
      await progress.drain();
      if (abort.signal.aborted) return;
      const message = `Upstream call failed: ${err instanceof Error ? err.message : String(err)}`;
      const failure = { status: 'failed' as const, error: { code: ErrorCode.InternalError, message }, statusMessage: message };
      await this.persist(task.taskId, deadline, () => store.finish(task.taskId, failure, this.now()), released);
    } finally {
      unsubscribe();
    }
  }
}

/** A plain call's end as the task's: its result, or its JSON-RPC error; anything else is thrown (the call did not end). */
async function outcomeOf(call: Promise<Record<string, unknown>>): Promise<NativeOutcome> {
  try {
    return { status: 'completed', result: await call };
  } catch (err) {
    if (!(err instanceof UpstreamRpcError)) throw err;
    const error = err.toJsonRpc();
    return { status: 'failed', error, statusMessage: error.message };
  }
}

/**
 * Progress can arrive far faster than anyone reads it (the demo's tools report every 250 ms;
 * clients poll every pollIntervalMs, 2 s by default): at most one statusMessage write per
 * PROGRESS_WRITE_INTERVAL_MS per task, one in flight, the newest message next. Every write is a
 * Redis script, a change event on every replica and a notification on every listen stream of the
 * task, so this bounds what a thousand chatty tasks cost the fleet. The end of the task flushes
 * what is pending at once.
 */
const PROGRESS_WRITE_INTERVAL_MS = 1_000;

class LatestWins {
  private pending: string | undefined;
  private inflight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastWriteAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly write: (message: string) => Promise<void>) {}

  push(message: string): void {
    this.pending = message;
    if (!this.inflight && !this.timer) this.schedule();
  }

  /** Drops what is pending, unwritten: the task is no longer this run's to describe. */
  discard(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }

  async drain(): Promise<void> {
    while (this.inflight || this.timer) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.inflight = this.flush();
      }
      await this.inflight;
    }
  }

  private schedule(): void {
    const wait = this.lastWriteAt + PROGRESS_WRITE_INTERVAL_MS - Date.now();
    if (wait <= 0) {
      this.inflight = this.flush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inflight = this.flush();
    }, wait);
  }

  private async flush(): Promise<void> {
    const message = this.pending;
    this.pending = undefined;
    if (message !== undefined) {
      this.lastWriteAt = Date.now();
      await this.write(message).catch(() => undefined);
    }
    this.inflight = undefined;
    if (this.pending !== undefined) this.schedule();
  }
}
