import { InternalError } from '../../core/errors.js';
import { sourcesOf } from '../../mapping/transitions.js';
import {
  expiresAt,
  isExpired,
  polledOf,
  type InputRequest,
  type NewTask,
  type PolledTask,
  type TaskRecord,
  type TaskStatus,
} from '../../core/task.js';
import { initialRecord } from '../initial-record.js';
import { ListenerSet } from '../listeners.js';
import type {
  AnswerOutcome,
  CancelOutcome,
  HoldOutcome,
  OpenKind,
  TaskOutcome,
  TaskStore,
} from '../task-store.js';
import type { TaskChange, Unsubscribe } from '../../core/task-change.js';
import { CANCEL_FROM, LIVE_STATUSES, REQUEST_INPUT_FROM, RESUME_FROM } from '../transition-rules.js';
import { ExpiryTimers } from './expiry-timers.js';
import { setOwnKey } from './own-keys.js';

interface Entry {
  record: TaskRecord;
  /** Withdrawn keys leave the record, yet stay used: a key is unique for the task's whole life. */
  withdrawn: Set<string>;
}

/**
 * The in-process store: one process, no durability. Records are cloned on the way in and out so
 * that no caller can change stored state, and changes reach subscribers asynchronously, as they
 * do from Redis.
 */
export class EmbeddedTaskStore implements TaskStore {
  readonly kind = 'embedded' as const;
  private readonly tasks = new Map<string, Entry>();
  private readonly listeners = new ListenerSet<TaskChange>();
  private readonly expiry = new ExpiryTimers((taskId) => this.tasks.delete(taskId));
  /** Per kind and principal: member → when it lapses. */
  private readonly open = new Map<string, Map<string, number>>();

  /** Tasks held, expired ones excluded once their timer fired. */
  get size(): number {
    return this.tasks.size;
  }

  async create(task: NewTask): Promise<TaskRecord> {
    if (this.live(task.taskId, Date.now())) throw new InternalError(`Task id ${task.taskId} already exists`);
    const record = structuredClone(initialRecord(task));
    this.tasks.set(record.taskId, { record, withdrawn: new Set() });
    this.expiry.schedule(record.taskId, expiresAt(record));
    return structuredClone(record);
  }

  async get(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, Date.now())?.record;
    return record?.principal === principal ? structuredClone(record) : undefined;
  }

  async poll(taskId: string, principal: string): Promise<PolledTask | undefined> {
    const record = this.live(taskId, Date.now())?.record;
    return record?.principal === principal ? structuredClone(polledOf(record)) : undefined;
  }

  async load(taskId: string): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, Date.now())?.record;
    return record && structuredClone(record);
  }

  async markStarted(taskId: string, now: number): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, now)?.record;
    if (!record) return undefined;
    if (LIVE_STATUSES.includes(record.status) && record.startedAt === undefined) {
      record.startedAt = now;
      this.touch(record, record.status, now);
    }
    return structuredClone(record);
  }

  async bindUpstream(taskId: string, upstreamTaskId: string, upstreamSessionId: string, now: number): Promise<boolean> {
    const record = this.live(taskId, now)?.record;
    if (!record || !LIVE_STATUSES.includes(record.status) || record.upstreamTaskId !== undefined) return false;
    record.upstreamTaskId = upstreamTaskId;
    record.upstreamSessionId = upstreamSessionId;
    return true;
  }

  async setStatusMessage(taskId: string, statusMessage: string, now: number): Promise<void> {
    const record = this.live(taskId, now)?.record;
    if (!record || !LIVE_STATUSES.includes(record.status) || record.statusMessage === statusMessage || record.cancelRequested) return;
    record.statusMessage = statusMessage;
    this.touch(record, record.status, now);
  }

  async requestInput(taskId: string, key: string, request: InputRequest, now: number): Promise<boolean> {
    const entry = this.live(taskId, now);
    if (!entry || !REQUEST_INPUT_FROM.includes(entry.record.status)) return false;
    const { record, withdrawn } = entry;
    if (Object.hasOwn(record.inputRequests, key) || Object.hasOwn(record.inputResponses, key) || withdrawn.has(key)) {
      return false;
    }
    setOwnKey(record.inputRequests, key, structuredClone(request));
    this.touch(record, 'input_required', now);
    return true;
  }

  async answerInput(
    taskId: string,
    principal: string,
    answers: Record<string, unknown>,
    now: number,
  ): Promise<AnswerOutcome | undefined> {
    const record = this.live(taskId, now)?.record;
    if (record?.principal !== principal) return undefined;
    const applied: string[] = [];
    if (LIVE_STATUSES.includes(record.status)) {
      for (const [key, answer] of Object.entries(answers)) {
        if (!Object.hasOwn(record.inputRequests, key)) continue;
        delete record.inputRequests[key];
        setOwnKey(record.inputResponses, key, structuredClone(answer));
        applied.push(key);
      }
    }
    if (applied.length > 0) this.touch(record, this.statusAfterSettling(record), now);
    return { applied, task: structuredClone(record) };
  }

  async withdrawInput(taskId: string, key: string, now: number): Promise<void> {
    const entry = this.live(taskId, now);
    if (!entry || !LIVE_STATUSES.includes(entry.record.status)) return;
    const { record, withdrawn } = entry;
    if (!Object.hasOwn(record.inputRequests, key)) return;
    delete record.inputRequests[key];
    withdrawn.add(key);
    this.touch(record, this.statusAfterSettling(record), now);
  }

  async finish(taskId: string, outcome: TaskOutcome, now: number): Promise<boolean> {
    const record = this.live(taskId, now)?.record;
    if (!record || !sourcesOf(outcome.status).includes(record.status)) return false;
    if (outcome.status === 'completed') {
      record.result = structuredClone(outcome.result);
    } else {
      if (outcome.status === 'failed') record.error = structuredClone(outcome.error);
      record.statusMessage = outcome.statusMessage;
    }
    this.touch(record, outcome.status, now);
    this.release('tasks', record.principal, taskId);
    return true;
  }

  async cancel(
    taskId: string,
    principal: string,
    statusMessage: string,
    now: number,
    awaitingUpstream = statusMessage,
  ): Promise<CancelOutcome | undefined> {
    const record = this.live(taskId, now)?.record;
    if (record?.principal !== principal) return undefined;
    if (!CANCEL_FROM.includes(record.status)) return { changed: false, task: structuredClone(record) };
    if (record.upstreamTaskId !== undefined) {
      // Backed by an upstream task: its mirror forwards the cancel and ends the record with the answer.
      if (record.cancelRequested) return { changed: false, task: structuredClone(record) };
      record.cancelRequested = true;
      record.statusMessage = awaitingUpstream;
      this.touch(record, record.status, now, true);
      return { changed: true, task: structuredClone(record) };
    }
    record.cancelRequested = true;
    record.statusMessage = statusMessage;
    this.touch(record, 'cancelled', now);
    this.release('tasks', principal, taskId);
    return { changed: true, task: structuredClone(record) };
  }

  async touchSession(
    taskId: string,
    principal: string,
    sessionId: string,
    now: number,
  ): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, now)?.record;
    if (record?.principal !== principal) return undefined;
    // Not a status or content change: terminal tasks take it too, and lastUpdatedAt stays.
    if (record.sessionId !== sessionId) {
      record.sessionId = sessionId;
      this.publish(record);
    }
    return structuredClone(record);
  }

  async holdOpen(kind: OpenKind, principal: string, member: string, lapsesAt: number, limit: number, now: number): Promise<HoldOutcome> {
    const members = this.openSet(kind, principal);
    for (const [held, lapses] of members) if (lapses <= now) members.delete(held);
    if (!members.has(member) && limit >= 0 && members.size >= limit) return { held: false, open: members.size };
    members.set(member, lapsesAt);
    return { held: true, open: members.size };
  }

  async releaseOpen(kind: OpenKind, principal: string, member: string): Promise<void> {
    this.release(kind, principal, member);
  }

  subscribe(listener: (change: TaskChange) => void): Unsubscribe {
    return this.listeners.add(listener);
  }

  /** Nothing to wait for: listeners of this process see every change from the moment they subscribe. */
  subscriptionReady(): Promise<void> {
    return Promise.resolve();
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.expiry.clear();
    this.tasks.clear();
    this.open.clear();
    this.listeners.clear();
  }

  private release(kind: OpenKind, principal: string, member: string): void {
    const key = `${kind}\u0000${principal}`;
    const members = this.open.get(key);
    members?.delete(member);
    if (members?.size === 0) this.open.delete(key);
  }

  private openSet(kind: OpenKind, principal: string): Map<string, number> {
    const key = `${kind}\u0000${principal}`;
    let members = this.open.get(key);
    if (!members) {
      members = new Map();
      this.open.set(key, members);
    }
    return members;
  }

  /** The entry, unless unknown or expired at `now` (its timer may not have fired yet). */
  private live(taskId: string, now: number): Entry | undefined {
    const entry = this.tasks.get(taskId);
    return entry && !isExpired(entry.record, now) ? entry : undefined;
  }

  private statusAfterSettling(record: TaskRecord): TaskStatus {
    const waiting = Object.keys(record.inputRequests).length > 0;
    return !waiting && RESUME_FROM.includes(record.status) ? 'working' : record.status;
  }

  private touch(record: TaskRecord, status: TaskStatus, now: number, cancelRequested = false): void {
    record.status = status;
    // Strictly increasing even for two changes within one millisecond, so it orders and dedupes changes.
    record.lastUpdatedAt = Math.max(now, record.lastUpdatedAt + 1);
    this.publish(record, cancelRequested);
  }

  /** Announces the record's current state, after the calling operation has returned. */
  private publish(record: TaskRecord, cancelRequested = false): void {
    const change: TaskChange = { taskId: record.taskId, status: record.status, lastUpdatedAt: record.lastUpdatedAt };
    if (record.sessionId !== undefined) change.sessionId = record.sessionId;
    if (cancelRequested) change.cancelRequested = true;
    queueMicrotask(() => this.listeners.emit(change));
  }
}
