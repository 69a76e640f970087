import type { InputRequest, JsonRpcErrorObject, NewTask, PolledTask, TaskRecord } from '../core/task.js';
import type { TaskChange, Unsubscribe } from '../core/task-change.js';

/**
 * The final outcome the worker writes; `completed` covers tool results with `isError: true`;
 * `cancelled` is how an upstream task that backs the task answered its cancel.
 */
export type TaskOutcome =
  | { status: 'completed'; result: Record<string, unknown> }
  | { status: 'failed'; error: JsonRpcErrorObject; statusMessage: string }
  | { status: 'cancelled'; statusMessage: string };

export interface AnswerOutcome {
  /** Keys that were outstanding and are now settled by this call. */
  applied: string[];
  /** The record after the call. */
  task: TaskRecord;
}

/** What a principal holds open, counted across the fleet (src/core/limits.ts). */
export type OpenKind = 'tasks' | 'streams' | 'sessions';

export interface HoldOutcome {
  /** False when the principal already held `limit` members: nothing changed. */
  held: boolean;
  /** Members the principal holds after the call. */
  open: number;
}

export interface CancelOutcome {
  /**
   * False when the task was already terminal, or its cancel already requested: nothing changed.
   * A changed task that is still live awaits its upstream's answer (`TaskStore.cancel`).
   */
  changed: boolean;
  task: TaskRecord;
}

/**
 * The durable task store. Every method that changes a task is one atomic step that enforces
 * the transition table in `src/mapping/transitions.ts`, bumps `lastUpdatedAt` and publishes a
 * `TaskChange`. Methods taking a `principal` are the client-facing ones: a task of another
 * principal, an unknown id and an expired task all read as `undefined`.
 * Methods without one are for the executor, which acts on ids it was handed by the store.
 */
export interface TaskStore {
  readonly kind: 'redis' | 'embedded';

  /** Write-through: when this resolves, `get` on any replica sees the task (status `working`). */
  create(task: NewTask): Promise<TaskRecord>;

  get(taskId: string, principal: string): Promise<TaskRecord | undefined>;

  /** `get` for a status answer: scoped and expiring alike, reading only what that answer shows. */
  poll(taskId: string, principal: string): Promise<PolledTask | undefined>;

  /** Executor read, unscoped. Still `undefined` once expired. */
  load(taskId: string): Promise<TaskRecord | undefined>;

  /** Records that a worker picked the task up. No-op (returns the record) on a terminal task. */
  markStarted(taskId: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Records the upstream task that backs a live task and its upstream session. False (changing
   * nothing) when the task is terminal, gone, or already bound: one upstream task per task.
   * Not a change any client sees: `lastUpdatedAt` stays and nothing is announced.
   */
  bindUpstream(taskId: string, upstreamTaskId: string, upstreamSessionId: string, now: number): Promise<boolean>;

  /** Sets `statusMessage` on a non-terminal task; ignored on a terminal one and while a cancel awaits its upstream. */
  setStatusMessage(taskId: string, statusMessage: string, now: number): Promise<void>;

  /**
   * Adds an outstanding input request and moves the task to `input_required`.
   * Returns false (changing nothing) when the task is terminal or the key was ever used.
   */
  requestInput(taskId: string, key: string, request: InputRequest, now: number): Promise<boolean>;

  /**
   * Settles the outstanding keys among `answers` in one atomic step; keys that are not
   * outstanding are ignored. When no request remains outstanding the task returns to `working`.
   */
  answerInput(
    taskId: string,
    principal: string,
    answers: Record<string, unknown>,
    now: number,
  ): Promise<AnswerOutcome | undefined>;

  /** Withdraws an outstanding request the work no longer waits for (e.g. the upstream cancelled it). */
  withdrawInput(taskId: string, key: string, now: number): Promise<void>;

  /** Compare-and-set to a terminal status; false when the task already was terminal. */
  finish(taskId: string, outcome: TaskOutcome, now: number): Promise<boolean>;

  /**
   * A non-terminal task becomes `cancelled` in the same step that records the request, unless an
   * upstream task backs it (`upstreamTaskId`): then only the request is recorded
   * (`cancelRequested`, `statusMessage` = `awaitingUpstream`, a change with `cancelRequested`), and
   * the task's mirror ends the record with the upstream's answer (`finish`). Until then no other
   * statusMessage replaces that one.
   */
  cancel(taskId: string, principal: string, statusMessage: string, now: number, awaitingUpstream?: string): Promise<CancelOutcome | undefined>;

  /**
   * Binds the task's pushes to `sessionId` (the legacy session that read it last). Scoped like
   * `get`; publishes a change carrying the new session so its streams pick the task up.
   */
  touchSession(taskId: string, principal: string, sessionId: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Counts `member` among the principal's open tasks or streams until `lapsesAt` (epoch ms),
   * unless the principal already holds `limit` members that have not lapsed (-1: no limit). A
   * member already held is renewed, never refused. One atomic step on one key per principal.
   * `finish` and a changing `cancel` release a task on their own; an expired one lapses.
   */
  holdOpen(kind: OpenKind, principal: string, member: string, lapsesAt: number, limit: number, now: number): Promise<HoldOutcome>;

  /** Stops counting `member`; nothing happens when it is not held. */
  releaseOpen(kind: OpenKind, principal: string, member: string): Promise<void>;

  /** Every change on every replica, in order per task. */
  subscribe(listener: (change: TaskChange) => void): Unsubscribe;

  /** Resolves once `subscribe` listeners receive changes (Redis SUBSCRIBE takes a round trip). */
  subscriptionReady(): Promise<void>;

  /** True when the backing store answers. */
  ping(): Promise<boolean>;

  close(): Promise<void>;
}
