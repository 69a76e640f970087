import { Cancels } from './cancels.js';
import { InvalidParamsError, TaskNotFoundError } from './errors.js';
import { newTaskId } from './ids.js';
import { checkAnswer, declaresInput, ERROR_ANSWER } from './input-responses.js';
import { planCall, resolvePolicy, type CallPlan, type PolicySources, type ToolPolicy } from './policy.js';
import type { Clock, ToolCatalog, ToolInfo, ToolInvoker } from './ports.js';
import type { CallContext, CallOutcome, CallRequest } from './call.js';
import { isTerminal, type JsonRpcErrorObject, type NewTask, type PolledTask, type TaskRecord } from './task.js';
import type { PrincipalLimits, StreamSlot } from './limits.js';
import type { TaskChange, Unsubscribe } from './task-change.js';
import { ParkedCalls } from './parked-call.js';
import { requestStateOf } from './mrtr-retry.js';
import { PreTaskCalls, type CallWindow } from './pre-task-call.js';
import type { TaskIntake } from './task-intake.js';
import { waitForTask } from './task-watch.js';
import { WindowedCalls } from './windowed-call.js';
import type { CancelOutcome, TaskStore } from '../store/task-store.js';

export interface TaskServiceOptions {
  store: TaskStore;
  /** Where created tasks go: counted, written and queued. */
  intake: TaskIntake;
  /** What a principal may hold open at once (the intake counts tasks, the wires streams). */
  limits: PrincipalLimits;
  invoker: ToolInvoker;
  /**
   * True for a tool whose tasks the upstream runs itself (a 2025-11-25 task server, a SEP-2663
   * server): its task record comes first, so that it can be bound to the upstream's task from the
   * start. Absent: no tool is.
   */
  upstreamRunsTasks?: (tool: string) => Promise<boolean>;
  catalog: ToolCatalog;
  clock: Clock;
  policies: PolicySources;
  defaultTtlMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
  /** Bound on a synchronous call, which has no task TTL to inherit. */
  syncTimeoutMs?: number;
  /** How long a cancel waits for the upstream task that backs a task (default UPSTREAM_CANCEL_GRACE_MS). */
  cancelGraceMs?: number;
}

/** A legacy client's JSON-RPC response to a pushed input request: its result or its error. */
export type PushAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

/** The longest a synchronous call runs, and how long a parked one waits for the client's retry. */
const MRTR_TTL_MS = 10 * 60 * 1000;

/**
 * The wire-neutral task core: decides which calls become tasks, creates them durably, and
 * applies client actions (read, answer, cancel) scoped to the caller's principal.
 */
export class TaskService {
  private readonly parked: ParkedCalls;
  private readonly preTask: PreTaskCalls;
  private readonly windowed: WindowedCalls;
  private readonly cancels: Cancels;
  constructor(private readonly options: TaskServiceOptions) {
    this.cancels = new Cancels(options.store, options.clock, options.cancelGraceMs);
    this.preTask = new PreTaskCalls(options.store, this.cancels);
    this.windowed = new WindowedCalls({
      store: options.store,
      intake: options.intake,
      invoker: options.invoker,
      cancels: this.cancels,
      now: () => options.clock.now(),
      ttlMs: (call) => this.ttlOf(call),
    });
    this.parked = new ParkedCalls({
      store: options.store,
      invoker: options.invoker,
      ttlMs: options.syncTimeoutMs ?? MRTR_TTL_MS,
      pollIntervalMs: options.pollIntervalMs,
    });
  }

  /** The longest a synchronous call may run (a legacy session's plain call to a stateless upstream too). */
  get syncTimeoutMs(): number {
    return this.options.syncTimeoutMs ?? MRTR_TTL_MS;
  }

  /** The upstream's tool, or undefined when it has none by that name. */
  toolInfo(tool: string): Promise<ToolInfo | undefined> {
    return this.options.catalog.get(tool);
  }

  policyFor(tool: string): Promise<ToolPolicy> {
    const { catalog, policies } = this.options;
    return catalog
      .get(tool)
      .then((info) => resolvePolicy(tool, policies, { declaresTasks: catalog.declaresTasks(), taskSupport: info?.execution?.taskSupport }).policy);
  }

  async callTool(ctx: CallContext, call: CallRequest): Promise<CallOutcome> {
    const policy = await this.policyFor(call.name);
    const plan = planCall(policy, call.optedIn, this.options.policies.autoWindowMs);
    if (call.retry) return this.resumeCall(ctx, call, call.retry, plan);
    switch (plan.kind) {
      case 'refuse':
        return { kind: 'refused', reason: plan.reason };
      case 'sync':
        return this.callSync(ctx, call);
      case 'task': {
        // The client gets a task whatever happens, so the record comes first (and its job runs
        // here when this replica may); a window only lets input asked inside it go back as MRTR.
        const window = this.inputFirst(ctx, plan);
        const task = await this.createTask(ctx, call);
        return window ? this.preTask.start(ctx, call, task, window) : { kind: 'task', task };
      }
      case 'auto':
        return this.auto(ctx, call, this.inputFirst(ctx, plan) ?? { windowMs: plan.windowMs, answerPlainly: true });
    }
  }

  /**
   * `auto`: the call becomes a task only if it outlasts its window or asks for input
   * (docs/decisions/0032-durable-when-it-must-be.md). A tool whose tasks the upstream runs itself
   * gets its record first: the upstream's task exists from the call's first instant, and the
   * record carries its id so that any replica can resume the mirror.
   */
  private async auto(ctx: CallContext, call: CallRequest, window: CallWindow): Promise<CallOutcome> {
    if (this.options.upstreamRunsTasks && (await this.options.upstreamRunsTasks(call.name))) {
      return this.preTask.start(ctx, call, await this.createTask(ctx, call), window);
    }
    return this.windowed.start(ctx, call, (createdAt) => this.newTask(ctx, call, createdAt), window);
  }

  /**
   * A retry continues the record its `requestState` names. A task not yet announced continues as
   * one only while this retry's own plan still allows a task (the client may not be handed a task
   * it did not declare it can handle); otherwise, like a parked synchronous call, the retry runs
   * until the call ends or asks again.
   */
  private resumeCall(ctx: CallContext, call: CallRequest, retry: NonNullable<CallRequest['retry']>, plan: CallPlan): Promise<CallOutcome> {
    const state = requestStateOf(retry.requestState);
    if (state.phase === 'task') {
      if (plan.kind === 'refuse') return Promise.resolve({ kind: 'refused', reason: plan.reason });
      const window = this.inputFirst(ctx, plan);
      if (window) return this.preTask.resume(ctx, call, state.recordId, retry.inputResponses, window);
    }
    return this.parked.resume(ctx, call, state.recordId, retry.inputResponses);
  }

  /**
   * A required or auto call from a SEP-2663 client that can answer input runs synchronously for
   * the window first, so that input asked inside it goes back as MRTR (docs/architecture.md, "Input
   * before the task exists"). Undefined for every other call.
   */
  private inputFirst(ctx: CallContext, plan: CallPlan): CallWindow | undefined {
    if (ctx.wire !== 'sep2663' || !declaresInput(ctx.clientCapabilities)) return undefined;
    if (plan.kind === 'auto') return { windowMs: plan.windowMs, answerPlainly: true };
    if (plan.kind === 'task' && plan.windowMs !== undefined) return { windowMs: plan.windowMs, answerPlainly: false };
    return undefined;
  }

  async getTask(principal: string, taskId: string): Promise<TaskRecord> {
    const task = await this.options.store.get(taskId, principal);
    if (!task) throw new TaskNotFoundError();
    return task;
  }

  /** `getTask` for a status answer: only the fields it shows (TaskStore.poll). */
  async pollTask(principal: string, taskId: string): Promise<PolledTask> {
    const task = await this.options.store.poll(taskId, principal);
    if (!task) throw new TaskNotFoundError();
    return task;
  }

  /**
   * Applies the answers to outstanding keys in one atomic step. A malformed answer for an
   * outstanding key refuses the whole request; answers for other keys are ignored.
   */
  updateTask(principal: string, taskId: string, inputResponses: Record<string, unknown>): Promise<TaskRecord> {
    return this.answerInput(principal, taskId, inputResponses);
  }

  /**
   * A legacy client's response to a pushed input request (`task:<taskId>:<key>`), checked as
   * `updateTask` checks answers: an unknown, foreign or expired task is TaskNotFoundError, a
   * malformed answer to an outstanding key InvalidParamsError; an answer to a key that is not
   * outstanding (stale, duplicate, terminal task) changes nothing. A JSON-RPC error answer is
   * kept as that input's failure, which the work raises (collect-input.ts).
   */
  async answerPush(principal: string, taskId: string, key: string, answer: PushAnswer): Promise<void> {
    const stored = 'error' in answer ? { [ERROR_ANSWER]: answer.error } : answer.result;
    await this.answerInput(principal, taskId, { [key]: stored }, 'error' in answer ? [key] : []);
  }

  /** Every client answer, whichever wire it came on: read, check, then one atomic write. */
  private async answerInput(principal: string, taskId: string, answers: Record<string, unknown>, unchecked: readonly string[] = []): Promise<TaskRecord> {
    const task = await this.getTask(principal, taskId);
    if (isTerminal(task.status)) return task;
    for (const [key, answer] of Object.entries(answers)) {
      // Keys come from the wire: only an outstanding request (an own property) is checked.
      const request = Object.hasOwn(task.inputRequests, key) ? task.inputRequests[key] : undefined;
      if (!request || unchecked.includes(key)) continue;
      const problem = checkAnswer(request, answer);
      if (problem) throw new InvalidParamsError(`Invalid answer for input request '${key}': ${problem}`, { key });
    }
    const outcome = await this.options.store.answerInput(taskId, principal, answers, this.options.clock.now());
    if (!outcome) throw new TaskNotFoundError();
    return outcome.task;
  }

  /**
   * Records a cancel. Most tasks are `cancelled` when this resolves; one an upstream task backs is
   * still live, its cancel on the way upstream (`cancelledTask` waits for its end).
   */
  async cancelTask(principal: string, taskId: string, statusMessage = 'Cancelled by the client.'): Promise<CancelOutcome> {
    const outcome = await this.cancels.cancel(principal, taskId, statusMessage);
    if (!outcome) throw new TaskNotFoundError();
    return outcome;
  }

  /**
   * The task once a cancel of it ended it, bounded by the cancel grace and its margin: `cancelled`,
   * or the outcome the upstream reached first.
   */
  async cancelledTask(principal: string, taskId: string): Promise<TaskRecord> {
    const task = await this.cancels.settled(taskId);
    if (task?.principal !== principal) throw new TaskNotFoundError();
    return task;
  }

  /** A legacy session read or touched the task: its pushes now go to that session's streams. */
  async touchTask(principal: string, taskId: string, sessionId: string): Promise<TaskRecord> {
    const task = await this.options.store.touchSession(taskId, principal, sessionId, this.options.clock.now());
    if (!task) throw new TaskNotFoundError();
    return task;
  }

  /** `getTask` without the error: undefined for an unknown, foreign or expired id. */
  findTask(principal: string, taskId: string): Promise<TaskRecord | undefined> {
    return this.options.store.get(taskId, principal);
  }

  /** The principal's tasks among `taskIds`, in that order; unknown, foreign and expired ones left out. */
  async getTasks(principal: string, taskIds: readonly string[]): Promise<TaskRecord[]> {
    const found = await Promise.all(taskIds.map((taskId) => this.options.store.get(taskId, principal)));
    return found.filter((task): task is TaskRecord => task !== undefined);
  }

  /**
   * An unscoped read, for fan-out that follows `subscribe`'s changes (a change names no principal):
   * the caller shows the record only to its own principal.
   */
  loadTask(taskId: string): Promise<TaskRecord | undefined> {
    return this.options.store.load(taskId);
  }

  /** Every task change on every replica, in order per task. */
  subscribe(listener: (change: TaskChange) => void): Unsubscribe {
    return this.options.store.subscribe(listener);
  }

  /** Counts a long-lived stream (listen, GET, tasks/result) against its principal; LimitExceededError at the limit. */
  openStream(principal: string): Promise<StreamSlot> {
    return this.options.limits.openStream(principal);
  }

  /** Counts a legacy session about to open until `lapsesAt`; LimitExceededError at the limit. */
  admitSession(principal: string, sessionId: string, lapsesAt: number): Promise<void> {
    return this.options.limits.admitSession(principal, sessionId, lapsesAt);
  }

  /** A legacy session still in use counts until `lapsesAt`; never refuses. */
  renewSession(principal: string, sessionId: string, lapsesAt: number): Promise<void> {
    return this.options.limits.renewSession(principal, sessionId, lapsesAt);
  }

  /** A legacy session deleted, lapsed or never opened stops counting. */
  releaseSession(principal: string, sessionId: string): Promise<void> {
    return this.options.limits.releaseSession(principal, sessionId);
  }

  /** Resolves when the task is terminal (or `until` holds), or at the timeout with its last state. */
  waitFor(taskId: string, until: (task: TaskRecord) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    return waitForTask(this.options.store, taskId, until, { timeoutMs, signal });
  }

  /**
   * A stateless client that declared some input capability can be asked for input mid-call
   * (MRTR); the legacy wires proxy their synchronous calls and never get here.
   */
  private async callSync(ctx: CallContext, call: CallRequest): Promise<CallOutcome> {
    if (ctx.wire === 'sep2663' && declaresInput(ctx.clientCapabilities)) return this.parked.call(ctx, call);
    const result = await this.options.invoker.callTool(call.name, call.arguments, {
      signal: call.clientGone?.(),
      timeoutMs: this.options.syncTimeoutMs ?? MRTR_TTL_MS,
    });
    return { kind: 'result', result };
  }

  /** Creates a task without consulting the policy (the legacy wires decide themselves): its job queued, or run here. */
  createTask(ctx: CallContext, call: CallRequest): Promise<TaskRecord> {
    return this.options.intake.create(this.newTask(ctx, call));
  }

  private ttlOf(call: CallRequest): number {
    return Math.min(call.requestedTtlMs ?? this.options.defaultTtlMs, this.options.maxTtlMs);
  }

  /** The record a call becomes, not yet stored. */
  private newTask(ctx: CallContext, call: CallRequest, now = this.options.clock.now()): NewTask {
    return {
      taskId: newTaskId(),
      principal: ctx.principal,
      origin: ctx.wire,
      sessionId: ctx.sessionId,
      tool: call.name,
      arguments: call.arguments,
      createdAt: now,
      ttlMs: this.ttlOf(call),
      pollIntervalMs: this.options.pollIntervalMs,
      clientCapabilities: ctx.clientCapabilities,
      clientInfo: ctx.clientInfo,
    };
  }
}
