import { collectInput } from './collect-input.js';
import { InvalidParamsError, UpstreamRpcError } from './errors.js';
import { newTaskId } from './ids.js';
import type { ToolInvoker } from './ports.js';
import type { InputRequest, TaskRecord } from './task.js';
import { waitForTask } from './task-watch.js';
import type { TaskStore } from '../store/task-store.js';
import type { CallContext, CallRequest } from './call.js';
import { answerRetry, UNKNOWN_STATE } from './mrtr-retry.js';
import { encodeRequestState } from './request-state.js';

/** What a synchronous call answers: its result, or the input it needs (MRTR). */
export type SyncOutcome =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'input'; inputRequests: Record<string, InputRequest>; requestState: string };

export interface ParkedCallOptions {
  store: TaskStore;
  invoker: ToolInvoker;
  /** How long a parked call waits for the client's retry, and the longest a synchronous call runs. */
  ttlMs: number;
  pollIntervalMs: number;
}

/**
 * Synchronous calls whose upstream asks for input (MRTR, SEP-2322). The call keeps
 * running in this replica; its input requests are parked in an unannounced task record, so the
 * client's retry, on any replica, answers them through the store like `tasks/update` would, and
 * then waits for the call to end or to ask again. `requestState` names that record; it needs no
 * signature, because the record is bound to the caller's principal and to the original request.
 */
export class ParkedCalls {
  constructor(private readonly options: ParkedCallOptions) {}

  async call(ctx: CallContext, call: CallRequest): Promise<SyncOutcome> {
    const { store, invoker } = this.options;
    let parked: Promise<TaskRecord> | undefined;
    let announce: (() => void) | undefined;
    const inputNeeded = new Promise<void>((resolve) => (announce = resolve));
    // A client that leaves before any answer takes the call with it; once parked, the call is the retry's.
    const abort = new AbortController();
    call.clientGone?.().addEventListener('abort', () => {
      if (!parked) abort.abort();
    }, { once: true });
    const running = invoker.callTool(call.name, call.arguments, {
      signal: abort.signal,
      timeoutMs: this.options.ttlMs,
      onInput: async (request, signal) => {
        parked ??= this.park(ctx, call);
        return collectInput(store, await parked, request, signal, announce);
      },
    });
    const first = await Promise.race([running.then((result) => ({ result }), (error: unknown) => ({ error })), inputNeeded.then(() => undefined)]);
    if (first && 'result' in first) {
      if (parked) await this.settle(await parked, running);
      return { kind: 'result', result: first.result };
    }
    if (first && 'error' in first) {
      if (parked) await this.settle(await parked, running);
      throw first.error;
    }
    const task = await (parked as Promise<TaskRecord>);
    // The call goes on without the client: whatever it ends with is kept for the retry.
    void this.settle(task, running);
    return this.inputOutcome(await store.load(task.taskId));
  }

  /** A retry carrying `requestState` and `inputResponses`: it runs until the call ends or asks again. */
  async resume(ctx: CallContext, call: CallRequest, recordId: string, inputResponses: Record<string, unknown>): Promise<SyncOutcome> {
    const { store } = this.options;
    const answered = await answerRetry(store, ctx, call, recordId, inputResponses);
    const task = answered.task;
    const before = new Set(Object.keys(answered.task.inputRequests));
    if (answered.task.status === 'input_required' && before.size > 0) return this.inputOutcome(answered.task);
    const next = await waitForTask(
      store,
      task.taskId,
      (t) => t.status === 'input_required' && Object.keys(t.inputRequests).some((key) => !before.has(key)),
      { timeoutMs: Math.max(1, task.createdAt + task.ttlMs - Date.now()), signal: call.clientGone?.() },
    );
    if (!next) throw new InvalidParamsError(UNKNOWN_STATE);
    if (next.status === 'completed' && next.result) return { kind: 'result', result: next.result };
    if (next.status === 'failed' && next.error) throw new UpstreamRpcError(next.error.code, next.error.message, next.error.data);
    if (next.status === 'input_required') return this.inputOutcome(next);
    throw new InvalidParamsError('The call did not finish in time');
  }

  private async park(ctx: CallContext, call: CallRequest): Promise<TaskRecord> {
    return this.options.store.create({
      taskId: newTaskId(),
      principal: ctx.principal,
      origin: ctx.wire,
      tool: call.name,
      arguments: call.arguments,
      createdAt: Date.now(),
      startedAt: Date.now(),
      ttlMs: this.options.ttlMs,
      pollIntervalMs: this.options.pollIntervalMs,
      clientCapabilities: ctx.clientCapabilities,
      clientInfo: ctx.clientInfo,
    });
  }

  private async settle(task: TaskRecord, running: Promise<Record<string, unknown>>): Promise<void> {
    const now = (): number => Date.now();
    await running.then(
      (result) => this.options.store.finish(task.taskId, { status: 'completed', result }, now()),
      (err: unknown) => {
        const error = err instanceof UpstreamRpcError ? err.toJsonRpc() : { code: -32603, message: `Upstream call failed: ${String(err)}` };
        return this.options.store.finish(task.taskId, { status: 'failed', error, statusMessage: error.message }, now());
      },
    ).catch(() => false);
  }

  private inputOutcome(task: TaskRecord | undefined): SyncOutcome {
    if (!task) throw new InvalidParamsError(UNKNOWN_STATE);
    return { kind: 'input', inputRequests: task.inputRequests, requestState: encodeRequestState({ recordId: task.taskId, phase: 'sync' }) };
  }
}
