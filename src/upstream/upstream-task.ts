import { z } from 'zod';
import { ErrorCode, UpstreamRpcError } from '../core/errors.js';
import type { NativeOutcome } from '../core/ports.js';
import type { JsonRpcErrorObject } from '../core/task.js';
import { UPSTREAM_CANCEL_GRACE_MS, UPSTREAM_STATUS_TABLE, UPSTREAM_TASK_STATUSES, type UpstreamTaskStatus } from '../mapping/upstream-statuses.js';
import { CONFIRMED_CANCEL, ClientCancel, sendCancel, type CancelAttempt } from './client-cancel.js';
import type { UpstreamRpc } from './client/rpc-client.js';
import { INPUT_CAPABILITIES, UpstreamSession, type UpstreamInputHandler } from './client/session.js';

/** The upstream task as its CreateTaskResult / tasks/get describe it. */
export interface UpstreamTaskView {
  taskId: string;
  status: UpstreamTaskStatus;
  statusMessage?: string;
  pollIntervalMs?: number;
}

export interface MirrorHooks {
  /** Aborted when the shim's task ended elsewhere: the cancel goes upstream, the record is no longer ours to end. */
  signal: AbortSignal;
  /** Aborted when a client asked to cancel: the cancel goes upstream and its answer ends the task. */
  cancel?: AbortSignal;
  /** Epoch ms, the shim task's expiry: nothing waits past it. */
  deadline: number;
  /** The upstream's side-channel requests (elicitation, sampling) tied to the task. */
  onInput?: UpstreamInputHandler;
  onStatusMessage?: (message: string) => void;
}

/** Bounds of a mirror; every wait on the upstream has one (docs/architecture.md, "Native execution"). */
export interface MirrorLimits {
  /** Consecutive failed attempts to reach the upstream before the task fails. */
  unreachableAttempts: number;
  /** First pause between those attempts, doubled each time. */
  retryBaseMs: number;
  /** How long tasks/result may lag behind a terminal status before the status alone decides. */
  resultGraceMs: number;
  /** How long a forwarded cancel waits for the upstream's answer (the core bounds the record by the same grace). */
  cancelGraceMs: number;
  /** The floor and ceiling of the upstream's pollInterval. */
  minPollMs: number;
  maxPollMs: number;
}

export const DEFAULT_MIRROR_LIMITS: MirrorLimits = {
  unreachableAttempts: 5,
  retryBaseMs: 250,
  resultGraceMs: 5_000,
  cancelGraceMs: UPSTREAM_CANCEL_GRACE_MS,
  minPollMs: 100,
  maxPollMs: 30_000,
};

const TaskViewSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(UPSTREAM_TASK_STATUSES),
  statusMessage: z.string().optional(),
  pollInterval: z.number().positive().optional(),
});

const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';
/** An upstream that is itself an SDK server sends messages the SDK already prefixed (`MCP error -32602: …`). */
const SDK_PREFIXES = /^(MCP error -?\d+: )+/;

/** A task from a CreateTaskResult or a tasks/get answer, or why it is not one. */
function parseTask(value: unknown): UpstreamTaskView | string {
  const parsed = TaskViewSchema.safeParse(value);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ');
  const { taskId, status, statusMessage, pollInterval } = parsed.data;
  return { taskId, status, statusMessage, pollIntervalMs: pollInterval };
}

function failed(message: string): NativeOutcome {
  return { status: 'failed', error: { code: ErrorCode.InternalError, message }, statusMessage: message };
}

function textOf(result: Record<string, unknown>): string | undefined {
  const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
  const texts = content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** The result without the related-task `_meta` the upstream adds: its id means nothing to our clients. */
function ownResult(value: Record<string, unknown>): Record<string, unknown> {
  const meta = value._meta as Record<string, unknown> | undefined;
  if (!meta || !(RELATED_TASK_META in meta)) return value;
  const { [RELATED_TASK_META]: _upstreamId, ...rest } = meta;
  const { _meta: _dropped, ...result } = value;
  return Object.keys(rest).length > 0 ? { ...result, _meta: rest } : result;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One upstream session that runs and mirrors one upstream task (a 2025-11-25 task server): the
 * task-augmented `tools/call`, `notifications/tasks/status`, `tasks/get` at the upstream's
 * pollInterval when no notification came, the side-channel requests on the `tasks/result`
 * stream, `tasks/result` for the outcome and `tasks/cancel`. A session of its own, since the
 * upstream binds a task to the session that created it; its id goes on the record, so that
 * another replica can rejoin it.
 */
export class UpstreamTaskSession {
  private statusListener: ((params: unknown) => void) | undefined;
  /** The cancel of the mirrored task: one that went upstream makes a `cancelled` end its confirmation. */
  private cancel: ClientCancel | undefined;

  private constructor(
    private readonly session: UpstreamSession,
    private readonly limits: MirrorLimits,
    /** Hears a mirror that gave up on an unreachable upstream (for the log). */
    private readonly onUnreachable?: (operation: string, err: unknown) => void,
  ) {
    session.onNotification = (message) => {
      if (message.method === 'notifications/tasks/status') this.statusListener?.(message.params);
    };
  }

  /** A new upstream session, or (with `sessionId`) the session a mirror ran in before its replica died. */
  static async open(
    rpc: UpstreamRpc,
    options: { clientInfo: { name: string; version: string }; onUnreachable?: (operation: string, err: unknown) => void },
    limits: MirrorLimits,
    sessionId?: string,
  ): Promise<UpstreamTaskSession> {
    const onStreamError = (err: Error) => options.onUnreachable?.('GET stream (task session)', err);
    const session = sessionId
      ? UpstreamSession.rejoin(rpc, sessionId, { onStreamError })
      : await UpstreamSession.openRetrying(rpc, { clientInfo: options.clientInfo, capabilities: INPUT_CAPABILITIES, stream: true, onStreamError });
    return new UpstreamTaskSession(session, limits, options.onUnreachable);
  }

  /** The upstream's id of the task session; a session the upstream did not name cannot be rejoined. */
  get sessionId(): string | undefined {
    return this.session.sessionId;
  }

  /**
   * The task-augmented call. An upstream may still answer a plain result (`result`), which ends
   * the task at once.
   */
  async create(
    tool: string,
    args: Record<string, unknown>,
    ttlMs: number,
    onInput: UpstreamInputHandler | undefined,
    signal: AbortSignal,
  ): Promise<{ task: UpstreamTaskView } | { result: Record<string, unknown> } | { fault: NativeOutcome }> {
    // An upstream that answers input while creating (before any task exists) gets the same handler.
    this.session.input = onInput;
    const record = await this.session.request('tools/call', { name: tool, arguments: args, task: { ttl: ttlMs } }, { signal, timeoutMs: ttlMs, onInput: this.holder });
    if (record && typeof record === 'object' && 'task' in record) {
      const task = parseTask(record.task);
      if (typeof task === 'string') return { fault: failed(`The upstream answered the task-augmented tools/call of ${tool} with a malformed task (${task})`) };
      return { task };
    }
    if (record && typeof record === 'object' && Array.isArray(record.content)) return { result: ownResult(record) };
    return { fault: failed(`The upstream answered the task-augmented tools/call of ${tool} with neither a task nor a result`) };
  }

  /**
   * Follows the upstream task until it ends, the shim task is cancelled (the cancel goes
   * upstream) or its deadline passes. Never throws: every fault of the upstream ends as a
   * `failed` outcome whose message names it.
   */
  async mirror(taskId: string, pollIntervalMs: number | undefined, hooks: MirrorHooks): Promise<NativeOutcome> {
    const limits = this.limits;
    const pollMs = Math.min(Math.max(pollIntervalMs ?? limits.minPollMs * 10, limits.minPollMs), limits.maxPollMs);
    let last: UpstreamTaskView | undefined;
    let terminalSince: number | undefined;
    let heardAt = Date.now();
    let fault: NativeOutcome | undefined;
    let unreachable = 0;
    let result: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
    let wake: () => void = () => undefined;
    const wakeUp = (): void => wake();
    // A client's cancel: sent once, its answer awaited until the grace ends; the upstream's task may still end otherwise first.
    const cancel = new ClientCancel(limits.cancelGraceMs, limits.retryBaseMs, this.cancelAttempt(taskId), wakeUp);
    this.cancel = cancel;

    // `at`: when the news was current (a poll's start, so that polls keep to one per pollInterval).
    const observe = (value: unknown, via: string, at = Date.now()): void => {
      const task = parseTask(value);
      if (typeof task === 'string') {
        fault ??= failed(`The upstream's ${via} for task ${taskId} is not a task (${task})`);
      } else if (task.taskId !== taskId) {
        fault ??= failed(`The upstream's ${via} for task ${taskId} describes another task (${task.taskId})`);
      } else if (last && UPSTREAM_STATUS_TABLE[last.status].record !== 'live' && task.status !== last.status) {
        fault ??= failed(`The upstream's task ${taskId} went from ${last.status} back to ${task.status}`);
      } else {
        last = task;
        heardAt = Math.max(heardAt, at);
        if (UPSTREAM_STATUS_TABLE[task.status].record === 'live') {
          if (task.statusMessage) hooks.onStatusMessage?.(task.statusMessage);
        } else {
          terminalSince ??= Date.now();
        }
      }
      wakeUp();
    };

    this.statusListener = (params) => {
      if ((params as { taskId?: unknown } | undefined)?.taskId === taskId) observe(params, 'notifications/tasks/status');
    };
    this.session.input = hooks.onInput;
    hooks.signal.addEventListener('abort', wakeUp);
    const unfollow = cancel.follow(hooks.cancel);
    let resultAbort = new AbortController();
    let resultPending = false;
    const fetchResult = (): void => {
      resultAbort = new AbortController();
      resultPending = true;
      const remaining = Math.max(1, hooks.deadline - Date.now());
      this.session
        .request('tasks/result', { taskId }, { signal: resultAbort.signal, timeoutMs: remaining, onInput: this.holder })
        .then(
          (value) => (result = { ok: true, value }),
          (error: unknown) => (result = { ok: false, error }),
        )
        .finally(() => {
          resultPending = false;
          wakeUp();
        });
    };
    fetchResult();

    try {
      for (;;) {
        if (fault) return fault;
        if (hooks.signal.aborted) return await cancel.settle();
        if (cancel.confirmed) return CONFIRMED_CANCEL;
        if (result) {
          const settled = result;
          result = undefined;
          if (settled.ok) return await this.settle(taskId, settled.value, last);
          if (resultAbort.signal.aborted) return await cancel.settle();
          if (settled.error instanceof UpstreamRpcError) return await this.settleError(taskId, settled.error, last);
          if (++unreachable >= limits.unreachableAttempts) return this.unreachable(taskId, settled.error);
          await sleep(limits.retryBaseMs * 2 ** (unreachable - 1));
          fetchResult();
          continue;
        }
        const now = Date.now();
        if (now >= hooks.deadline) return failed(`The upstream's task ${taskId} did not finish within the task's TTL`);
        if (cancel.expired(now)) return cancel.unconfirmed();
        if (last && terminalSince !== undefined && now - terminalSince >= limits.resultGraceMs) return this.fromStatus(last, undefined);
        if (now - heardAt >= pollMs) {
          // The interval runs from the poll's start: one request per pollInterval, however long each takes.
          heardAt = now;
          const polled = await this.request('tasks/get', { taskId }, pollMs * 4);
          if (polled.ok) {
            unreachable = 0;
            observe(polled.value, 'tasks/get', now);
          } else if (polled.error instanceof UpstreamRpcError) {
            return failed(`The upstream no longer knows task ${taskId} (tasks/get: ${polled.error.code} ${polled.error.message})`);
          } else if (++unreachable >= limits.unreachableAttempts) {
            return this.unreachable(taskId, polled.error);
          }
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(heardAt + pollMs, hooks.deadline, cancel.deadline) - now);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = () => undefined;
      }
    } finally {
      // Aborting sends notifications/cancelled upstream: only for a tasks/result still waiting.
      if (resultPending) resultAbort.abort();
      hooks.signal.removeEventListener('abort', wakeUp);
      unfollow();
      this.statusListener = undefined;
      this.session.input = undefined;
    }
  }

  /**
   * Answers a side-channel request the upstream sent to a replica that died before answering it:
   * a JSON-RPC response on the task session, with the upstream's own request id.
   */
  answer(id: string | number, answer: { result: Record<string, unknown> } | { error: JsonRpcErrorObject }): Promise<void> {
    return this.session.respond(id, answer);
  }

  /** Stops following the session; with `terminate` (the task is over) ends it at the upstream (DELETE). */
  close(terminate: boolean): Promise<void> {
    return this.session.close(terminate);
  }

  /** Requests on a request's own answer stream go to whoever holds the session now, like those on its GET stream. */
  private readonly holder: UpstreamInputHandler = (request, id, signal) => {
    const input = this.session.input;
    if (!input) return Promise.reject(new UpstreamRpcError(ErrorCode.MethodNotFound, `${request.method} is not available for this call`));
    return input(request, id, signal);
  };

  /**
   * Tells the upstream to cancel a task whose record already ended (it was ended while no mirror
   * ran), within the grace.
   */
  async cancelOnly(taskId: string): Promise<void> {
    await sendCancel(this.cancelAttempt(taskId), Date.now() + this.limits.cancelGraceMs, this.limits.retryBaseMs);
  }

  /** One tasks/cancel: a 2025-11-25 upstream answers the task, which may say `cancelled` already. */
  private cancelAttempt(taskId: string): CancelAttempt {
    return async (timeoutMs) => {
      const answer = await this.request('tasks/cancel', { taskId }, timeoutMs);
      if (answer.ok) {
        const task = parseTask(answer.value);
        return typeof task !== 'string' && task.status === 'cancelled' ? { kind: 'confirmed' } : { kind: 'pending' };
      }
      // A task that ended first cannot be cancelled: the upstream says so with an error.
      if (answer.error instanceof UpstreamRpcError) return { kind: 'refused', why: `${answer.error.code} ${answer.error.message.replace(SDK_PREFIXES, '')}` };
      return undefined;
    };
  }

  /** tasks/result answered: its status (from the mirror, else one tasks/get) says what the result means. */
  private async settle(taskId: string, value: unknown, last: UpstreamTaskView | undefined): Promise<NativeOutcome> {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return failed(`The upstream's tasks/result for task ${taskId} is not a result`);
    let status = last;
    if (!status || UPSTREAM_STATUS_TABLE[status.status].record === 'live') {
      const polled = await this.request('tasks/get', { taskId }, this.limits.resultGraceMs);
      const task = polled.ok ? parseTask(polled.value) : undefined;
      status = task && typeof task !== 'string' ? task : undefined;
    }
    // A result is a terminal task's: an upstream that cannot say which kind ended it completed.
    return this.fromStatus(status && UPSTREAM_STATUS_TABLE[status.status].record !== 'live' ? status : { taskId, status: 'completed' }, ownResult(value as Record<string, unknown>));
  }

  /** tasks/result answered an error: a failed or cancelled task answers so; anything else is the upstream's fault. */
  private async settleError(taskId: string, error: UpstreamRpcError, last: UpstreamTaskView | undefined): Promise<NativeOutcome> {
    if (last && UPSTREAM_STATUS_TABLE[last.status].record !== 'live') return this.fromStatus(last, undefined);
    const polled = await this.request('tasks/get', { taskId }, this.limits.resultGraceMs);
    const task = polled.ok ? parseTask(polled.value) : undefined;
    if (task && typeof task !== 'string' && (task.status === 'cancelled' || task.status === 'failed')) return this.fromStatus(task, undefined);
    const message = error.message.replace(SDK_PREFIXES, '');
    if (!polled.ok && polled.error instanceof UpstreamRpcError) return failed(`The upstream no longer knows task ${taskId} (tasks/result: ${error.code} ${message})`);
    return { status: 'failed', error: error.toJsonRpc(), statusMessage: `The upstream's tasks/result for task ${taskId} failed: ${message}` };
  }

  /** The outcome a terminal upstream status maps to (src/mapping/upstream-statuses.ts). */
  private fromStatus(task: UpstreamTaskView, result: Record<string, unknown> | undefined): NativeOutcome {
    const record = UPSTREAM_STATUS_TABLE[task.status].record;
    if (record === 'completed') return result ? { status: 'completed', result } : failed(`The upstream's task ${task.taskId} completed but tasks/result gave no result`);
    if (record === 'cancelled') {
      return this.cancel?.started ? CONFIRMED_CANCEL : { status: 'cancelled', statusMessage: task.statusMessage ?? 'The upstream cancelled its task' };
    }
    const why = task.statusMessage ?? (result ? textOf(result) : undefined) ?? 'no reason given';
    return failed(`The upstream's task failed: ${why}`);
  }

  private unreachable(taskId: string, error: unknown): NativeOutcome {
    this.onUnreachable?.(`mirror of upstream task ${taskId}`, error);
    const why = error instanceof Error ? error.message : String(error);
    return failed(`The upstream became unreachable while it ran task ${taskId} (${this.limits.unreachableAttempts} attempts): ${why}`);
  }

  /** No answer in time is the upstream's silence, not its answer (an UnavailableError): retried like a refused connection. */
  private async request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
    try {
      return { ok: true, value: await this.session.request(method, params, { timeoutMs }) };
    } catch (err) {
      return { ok: false, error: err };
    }
  }
}

