import type { z } from 'zod';
import { ErrorCode, ShimError, UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../core/errors.js';
import type { NativeHooks, NativeOutcome, NativeResume, NativeRun } from '../core/ports.js';
import type { InputRequest } from '../core/task.js';
import { UPSTREAM_STATUS_TABLE } from '../mapping/upstream-statuses.js';
import { TASKS_EXTENSION } from '../wire/sep2663/constants.js';
import { Ack, DetailedTask, ToolsCallAnswer } from '../wire/sep2663/result-schemas.js';
import { CONFIRMED_CANCEL, ClientCancel, sendCancel, type CancelAttempt } from './client-cancel.js';
import type { Sep2663UpstreamClient } from './client/sep2663-client.js';
import type { MirrorLimits } from './upstream-task.js';

/**
 * MRTR rounds a polymorphic tools/call may take before its task or result: an upstream that asks
 * again and again would otherwise hold the job until the TTL.
 */
const MAX_INPUT_ROUNDS = 16;
/** A best-effort tasks/cancel after a fault waits at most this long. */
const FAULT_CANCEL_MS = 2_000;
/**
 * The shortest timeout of a mirror's tasks/get: a short pollInterval must not turn a busy
 * upstream's slower answer into an "unreachable" attempt.
 */
const MIN_REQUEST_MS = 5_000;
/**
 * The id an MRTR question of round `round` carries on the record: its answer belongs to the retry,
 * never to a `tasks/update` (a resumed mirror skips it; the upstream's task keys are another space).
 */
const MRTR_ID = (round: number, key: string) => `mrtr/${round}/${key}`;
const isMrtrId = (id: string | number) => typeof id === 'string' && id.startsWith('mrtr/');

/** The input kinds the shim can relay, as the record's capabilities allow them. */
const INPUT_KINDS = ['elicitation', 'sampling', 'roots'] as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function failed(message: string): NativeOutcome {
  return { status: 'failed', error: { code: ErrorCode.InternalError, message }, statusMessage: message };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An error with its JSON-RPC code when it has one: the upstream's refusal reads as such. */
function describe(err: unknown): string {
  return err instanceof ShimError && !(err instanceof UnavailableError) ? `${err.code} ${err.message}` : messageOf(err);
}

/** A CallToolResult without the 2026 `resultType`: the record holds the tool's result for every wire. */
function toolResult(value: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _resultType, ...result } = value;
  return result;
}

/** An input request that is still waiting for its answer, by the upstream's key. */
interface PendingInput {
  stop: AbortController;
}

/**
 * Runs and mirrors the tasks of a SEP-2663 upstream (docs/architecture.md, "SEP-2663 execution"):
 * the polymorphic `tools/call` (a plain result ends the record; MRTR input is asked on the record
 * and answered in the retry; a task handle is bound to the record), then `tasks/get` at the
 * upstream's `pollIntervalMs` until the task ends, its `inputRequests` as the record's and the
 * answers back with `tasks/update`, a cancel forwarded with `tasks/cancel` (once; the task's end,
 * read with `tasks/get` within the grace, is its answer). Stateless: nothing but
 * the upstream task id is needed to resume on another replica.
 */
export class Sep2663Tasks {
  constructor(
    private readonly client: Sep2663UpstreamClient,
    private readonly limits: MirrorLimits,
    /** Hears a mirror that gave up on an unreachable upstream (for the log). */
    private readonly onUnreachable?: (operation: string, err: unknown) => void,
  ) {}

  async run(run: NativeRun): Promise<NativeOutcome> {
    const capabilities = requestCapabilities(run.clientCapabilities);
    let params: Record<string, unknown> = { name: run.tool, arguments: run.args };
    for (let round = 0; round < MAX_INPUT_ROUNDS; round++) {
      let answer: z.infer<typeof ToolsCallAnswer>;
      try {
        answer = await this.client.call('tools/call', params, ToolsCallAnswer, {
          capabilities,
          timeoutMs: Math.max(1, run.deadline - Date.now()),
          signal: run.signal,
        });
      } catch (err) {
        // The tool's own JSON-RPC error is its answer, as in shim mode; anything else is not.
        if (err instanceof UpstreamRpcError) return { status: 'failed', error: err.toJsonRpc(), statusMessage: err.message };
        if (err instanceof UpstreamProtocolError) return failed(`The upstream's answer to tools/call of ${run.tool} is not MCP: ${err.message}`);
        throw err;
      }
      if (answer.resultType === 'task') {
        if (run.signal.aborted || !(await run.onBound(answer.taskId, ''))) return this.newCancel(answer.taskId, capabilities).settle();
        return this.mirror(answer.taskId, answer.pollIntervalMs, answer.status, run, capabilities, []);
      }
      if (answer.resultType !== 'input_required') return { status: 'completed', result: toolResult(answer) };
      const responses = await this.answerAll(round, answer.inputRequests ?? {}, run);
      if ('fault' in responses) return responses.fault;
      params = { name: run.tool, arguments: run.args, inputResponses: responses.answers, ...(answer.requestState ? { requestState: answer.requestState } : {}) };
    }
    return failed(`The upstream asked for input ${MAX_INPUT_ROUNDS} times before tools/call of ${run.tool} started or ended`);
  }

  /** Follows the upstream task of a lost mirror; what that mirror had parked is answered under the upstream's keys. */
  resume(resume: NativeResume): Promise<NativeOutcome> {
    const parked = resume.outstanding.filter((input) => !isMrtrId(input.id));
    return this.mirror(resume.upstreamTaskId, undefined, undefined, resume, requestCapabilities(resume.clientCapabilities), parked);
  }

  /** The MRTR answers of one round: every request asked on the record at once. */
  private async answerAll(
    round: number,
    requests: Record<string, InputRequest>,
    hooks: NativeHooks,
  ): Promise<{ answers: Record<string, unknown> } | { fault: NativeOutcome }> {
    try {
      const entries = await Promise.all(
        Object.entries(requests).map(async ([key, request]) => [key, await hooks.onInput(request, MRTR_ID(round, key), hooks.signal)] as const),
      );
      return { answers: Object.fromEntries(entries) };
    } catch (err) {
      if (hooks.signal.aborted) throw err;
      return { fault: failed(`An input the upstream asked for before its task got no answer the upstream can take: ${describe(err)}`) };
    }
  }

  /**
   * Polls the upstream task until it ends, the record ends elsewhere (the cancel goes upstream)
   * or the deadline passes. A client's cancel goes upstream once and the mirror polls on: the
   * upstream task's end within the grace is the answer (`cancelled` confirms it; an upstream that
   * finished first gives its real outcome). Never throws: each fault of the upstream ends as a
   * `failed` outcome whose message names it.
   */
  private async mirror(
    taskId: string,
    pollIntervalMs: number | undefined,
    /** The status the task handle gave, when there was one: a later status may not go back from a terminal one. */
    created: DetailedTask['status'] | undefined,
    hooks: NativeHooks,
    capabilities: Record<string, unknown>,
    outstanding: NativeResume['outstanding'],
  ): Promise<NativeOutcome> {
    const limits = this.limits;
    const clamp = (ms: number | undefined) => Math.min(Math.max(ms ?? limits.minPollMs * 10, limits.minPollMs), limits.maxPollMs);
    let pollMs = clamp(pollIntervalMs);
    let nextPoll = Date.now();
    const pending = new Map<string, PendingInput>();
    let fault: NativeOutcome | undefined;
    let unreachable = 0;
    let wake: () => void = () => undefined;
    const wakeUp = (): void => wake();
    // The ack says nothing of the task (SEP-2663, `tasks/cancel`: cancellation is cooperative): once it came, the next tasks/get reads what the cancel did.
    const cancel = this.newCancel(taskId, capabilities, () => {
      if (cancel.answered) nextPoll = Date.now();
      wakeUp();
    });
    const cancelFault = (outcome: NativeOutcome) => this.cancelAfterFault(taskId, capabilities, outcome, cancel);

    const follow = (key: string, answer: (signal: AbortSignal) => Promise<Record<string, unknown>>): void => {
      const stop = new AbortController();
      const signal = AbortSignal.any([stop.signal, hooks.signal]);
      pending.set(key, { stop });
      answer(signal)
        .then(
          (value) =>
            this.update(taskId, key, value, capabilities).catch((err: unknown) => {
              fault ??= failed(`The upstream did not take the answer to input request ${key} of its task ${taskId}: ${describe(err)}`);
            }),
          (err: unknown) => {
            // A withdrawn request (the upstream stopped listing it, the task ended) needs no answer.
            if (!signal.aborted) fault ??= failed(`Input request ${key} of the upstream's task ${taskId} got no answer the upstream can take: ${describe(err)}`);
          },
        )
        .finally(() => {
          if (pending.get(key)?.stop === stop) pending.delete(key);
          // An answer went upstream (or will not): the next tasks/get reads what it did at once.
          nextPoll = Date.now();
          wakeUp();
        });
    };
    // The keys the lost mirror parked (answered or not): the upstream ignores an answer it already has.
    for (const parked of outstanding) follow(String(parked.id), parked.answer);
    const answered = new Set(outstanding.map((parked) => String(parked.id)));

    hooks.signal.addEventListener('abort', wakeUp);
    const unfollow = cancel.follow(hooks.cancel);
    try {
      for (;;) {
        if (fault) return await cancelFault(fault);
        if (hooks.signal.aborted) return await cancel.settle();
        const now = Date.now();
        if (cancel.expired(now)) return cancel.unconfirmed();
        if (now >= hooks.deadline) return await cancelFault(failed(`The upstream's task ${taskId} did not finish within the task's TTL`));
        if (now < nextPoll) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(nextPoll, hooks.deadline, cancel.deadline) - now);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = () => undefined;
          continue;
        }
        let task: DetailedTask;
        try {
          const timeoutMs = Math.min(Math.max(pollMs * 4, MIN_REQUEST_MS), Math.max(1, hooks.deadline - now), Math.max(1, cancel.deadline - now));
          task = await this.client.call('tasks/get', { taskId }, DetailedTask, { capabilities, timeoutMs, signal: hooks.signal });
          unreachable = 0;
        } catch (err) {
          if (hooks.signal.aborted) continue;
          // The replica is closing: the record keeps the upstream task for the replica that resumes it.
          if (this.client.closed) return failed(`The mirror of upstream task ${taskId} stopped with its replica`);
          if (err instanceof UpstreamRpcError) {
            // A cancelled task the upstream forgot cannot confirm the cancel; the client asked for its end all the same.
            if (cancel.started) return cancel.unconfirmed(`tasks/get: ${err.code} ${err.message}`);
            return failed(`The upstream no longer knows task ${taskId} (tasks/get: ${err.code} ${err.message})`);
          }
          if (err instanceof UpstreamProtocolError) return await cancelFault(failed(`The upstream's tasks/get for task ${taskId} is not a task: ${err.message}`));
          if (++unreachable >= limits.unreachableAttempts) return this.unreachable(taskId, err);
          nextPoll = Date.now() + limits.retryBaseMs * 2 ** (unreachable - 1);
          continue;
        }
        if (task.taskId !== taskId) return await cancelFault(failed(`The upstream's tasks/get for task ${taskId} describes another task (${task.taskId})`));
        if (created && UPSTREAM_STATUS_TABLE[created].record !== 'live' && task.status !== created) {
          return await cancelFault(failed(`The upstream's task ${taskId} went from ${created} back to ${task.status}`));
        }
        pollMs = clamp(task.pollIntervalMs ?? pollMs);
        // The interval runs from the poll's start: one request per pollInterval, however long each takes.
        nextPoll = now + pollMs;
        if (UPSTREAM_STATUS_TABLE[task.status].record !== 'live') return this.fromStatus(task, cancel);
        if (task.statusMessage) hooks.onStatusMessage(task.statusMessage);
        const listed = task.status === 'input_required' ? task.inputRequests : {};
        // A request the upstream no longer lists was answered or withdrawn there: it is withdrawn here too.
        for (const [key, input] of pending) if (!(key in listed)) input.stop.abort();
        for (const [key, request] of Object.entries(listed)) {
          if (pending.has(key) || answered.has(key)) continue;
          answered.add(key);
          follow(key, (signal) => hooks.onInput(request, key, signal));
        }
      }
    } finally {
      hooks.signal.removeEventListener('abort', wakeUp);
      unfollow();
      for (const input of pending.values()) input.stop.abort();
    }
  }

  /** One answer back to the upstream; an unreachable upstream is tried again within the mirror's bound. */
  private async update(taskId: string, key: string, answer: Record<string, unknown>, capabilities: Record<string, unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.call('tasks/update', { taskId, inputResponses: { [key]: answer } }, Ack, { capabilities, timeoutMs: this.limits.cancelGraceMs });
        return;
      } catch (err) {
        if (!(err instanceof UnavailableError) || attempt >= this.limits.unreachableAttempts) throw err;
        await sleep(this.limits.retryBaseMs * 2 ** (attempt - 1));
      }
    }
  }

  /** The cancel of one upstream task: `tasks/cancel` answers an ack (SEP-2663, `tasks/cancel`) or refuses (e.g. an id it does not know). */
  private newCancel(taskId: string, capabilities: Record<string, unknown>, onChange?: () => void): ClientCancel {
    return new ClientCancel(this.limits.cancelGraceMs, this.limits.retryBaseMs, this.cancelAttempt(taskId, capabilities), onChange);
  }

  /** Tells the upstream to cancel a task whose record already ended while no mirror ran, within the grace. */
  async cancelOnly(taskId: string): Promise<void> {
    await sendCancel(this.cancelAttempt(taskId, requestCapabilities(undefined)), Date.now() + this.limits.cancelGraceMs, this.limits.retryBaseMs);
  }

  private cancelAttempt(taskId: string, capabilities: Record<string, unknown>): CancelAttempt {
    return async (timeoutMs) => {
      try {
        await this.client.call('tasks/cancel', { taskId }, Ack, { capabilities, timeoutMs });
        return { kind: 'pending' };
      } catch (err) {
        if (err instanceof UnavailableError) return undefined;
        return { kind: 'refused', why: describe(err) };
      }
    };
  }

  /**
   * A fault ends the record; the upstream task, which may still run, is told to stop (best effort),
   * unless a client's cancel already went upstream.
   */
  private async cancelAfterFault(taskId: string, capabilities: Record<string, unknown>, fault: NativeOutcome, cancel: ClientCancel): Promise<NativeOutcome> {
    if (!cancel.started) await this.client.call('tasks/cancel', { taskId }, Ack, { capabilities, timeoutMs: FAULT_CANCEL_MS }).catch(() => undefined);
    return fault;
  }

  /** The outcome a terminal upstream status maps to (src/mapping/upstream-statuses.ts). */
  private fromStatus(task: DetailedTask, cancel: ClientCancel): NativeOutcome {
    const record = UPSTREAM_STATUS_TABLE[task.status].record;
    if (record === 'completed' && task.status === 'completed') return { status: 'completed', result: toolResult(task.result) };
    if (record === 'failed' && task.status === 'failed') {
      const { code, message, data } = task.error;
      return { status: 'failed', error: data === undefined ? { code, message } : { code, message, data }, statusMessage: `The upstream's task failed: ${task.statusMessage ?? message}` };
    }
    return cancel.started ? CONFIRMED_CANCEL : { status: 'cancelled', statusMessage: task.statusMessage ?? 'The upstream cancelled its task' };
  }

  private unreachable(taskId: string, error: unknown): NativeOutcome {
    this.onUnreachable?.(`mirror of upstream task ${taskId}`, error);
    return failed(`The upstream became unreachable while it ran task ${taskId} (${this.limits.unreachableAttempts} attempts): ${messageOf(error)}`);
  }
}

/**
 * The `_meta` client capabilities the shim declares upstream for a task: the input kinds its own
 * client declared (so the upstream never asks what no one can answer) and the tasks extension.
 */
function requestCapabilities(client: Record<string, unknown> | undefined): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const kind of INPUT_KINDS) if (client?.[kind] !== undefined) declared[kind] = client[kind];
  return { ...declared, extensions: { [TASKS_EXTENSION]: {} } };
}
