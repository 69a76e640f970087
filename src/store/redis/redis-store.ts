import { Cluster } from 'ioredis';
import { InternalError } from '../../core/errors.js';
import { isExpired, type InputRequest, type NewTask, type PolledTask, type TaskRecord, type TaskStatus } from '../../core/task.js';
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
import { sourcesOf } from '../../mapping/transitions.js';
import { CANCEL_FROM, LIVE_STATUSES, REQUEST_INPUT_FROM, RESUME_FROM } from '../transition-rules.js';
import { decodeFlatTask, decodePolled, decodePolledHash, decodeTask, encodeAnswer, encodeOutcome, encodeTask, hashOfFlat, POLL_FIELDS } from './codec.js';
import {
  callRedis,
  disconnect,
  openRedis,
  pingRedis,
  type RedisClientOptions,
  type RedisConnection,
} from './connection.js';
import { ChannelSubscription } from './channel-subscription.js';
import { checkPrefix, DEFAULT_PREFIX, eventsChannel, openKey, taskKey } from './keys.js';
import { loadScripts, type RunKeysScript } from './scripts.js';

/**
 * What createQueued or createHeld did: created the task and its job, or nothing because its
 * principal holds `open` tasks. `open`: the tasks the principal holds after the call (absent when
 * its tasks are not counted).
 */
export type QueuedCreation = { created: true; task: TaskRecord; open?: number } | { created: false; open: number };

/** The work queue's keys a held creation leases the job in (src/execution/queue-keys.ts), and the holder. */
export interface HeldJobLease {
  leases: string;
  owners: string;
  workers: string;
  token: string;
  lockMs: number;
}

export interface RedisTaskStoreOptions extends RedisClientOptions {
  /** Prefix of every key and of the events channel; default `mts`. */
  prefix?: string;
}

/** The task store's scripts (src/store/redis/lua). */
const SCRIPTS = new URL('./lua/', import.meta.url);
/** The scripts that change one task: each takes its hash and the common ARGV header (includes/common.lua). */
const OPERATIONS = [
  'create',
  'mark-started',
  'bind-upstream',
  'set-status-message',
  'request-input',
  'answer-input',
  'withdraw-input',
  'finish',
  'cancel',
  'touch-session',
] as const;
type Operation = (typeof OPERATIONS)[number];

/** poll-owned-1.lua's answer: the POLL_FIELDS values, or the whole hash of a task waiting on input. */
type PollReply = Array<string | null> | [string[]];
/** poll-owned-1.lua's arguments before the principal. */
const POLL_ARGS: readonly string[] = POLL_FIELDS;

/** Principals whose open-task key is kept; more start the cache afresh. */
const OPEN_KEYS_CACHED = 10_000;

function statusList(statuses: readonly TaskStatus[]): string {
  return statuses.join(',');
}

/**
 * The production store: one hash per task, every change one Lua script that checks the status,
 * writes and publishes atomically. A client's read is one read-only script that checks the
 * principal before it reads the record (a poll reads only the fields it shows); an executor's
 * read is a single HGETALL.
 */
export class RedisTaskStore implements TaskStore {
  readonly kind = 'redis' as const;
  private readonly redis: RedisConnection;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly scripts: Record<Operation, RunKeysScript>;
  private readonly holdOpenScript: RunKeysScript;
  private readonly createQueuedScript: RunKeysScript;
  private readonly createHeldScript: RunKeysScript;
  private readonly readOwnedScript: RunKeysScript;
  private readonly pollOwnedScript: RunKeysScript;
  private readonly openTaskKeys = new Map<string, string>();
  private readonly listeners = new ListenerSet<TaskChange>();
  /** One subscriber connection, opened with the first listener, serves every listener of this store. */
  private readonly subscription: ChannelSubscription;

  constructor(options: RedisTaskStoreOptions = {}) {
    // Checked before connecting, so that a bad prefix leaves no connection behind.
    this.prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX);
    const { redis, owned } = openRedis(options);
    this.redis = redis;
    this.ownsClient = owned;
    this.channel = eventsChannel(this.prefix);
    this.subscription = new ChannelSubscription(this.redis, this.channel, 'Task store', (message) => this.deliver(message));
    this.scripts = loadScripts(this.redis, SCRIPTS, OPERATIONS);
    const others = loadScripts(this.redis, SCRIPTS, ['hold-open', 'create-queued', 'create-held', 'read-owned', 'poll-owned']);
    this.holdOpenScript = others['hold-open'];
    this.createQueuedScript = others['create-queued'];
    this.createHeldScript = others['create-held'];
    this.readOwnedScript = others['read-owned'];
    this.pollOwnedScript = others['poll-owned'];
  }

  async create(task: NewTask): Promise<TaskRecord> {
    const record = initialRecord(task);
    const expiry = String(record.createdAt + record.ttlMs);
    const created = await this.run('create', record.taskId, record.createdAt, encodeTask(record, [expiry, record.principal]));
    if (created !== 1) throw new InternalError(`Task id ${record.taskId} already exists`);
    // What every replica reads back: its JSON values arrived as parsed JSON, so they survive the round trip.
    return record;
  }

  /**
   * A task's whole creation in one script, for one Redis (a Cluster refuses its keys of three
   * slots): counts it against its principal's open tasks when `maxOpenTasks` > 0, writes it and
   * pushes its id on the work queue's `queue` list, or does nothing at all.
   */
  async createQueued(task: NewTask, queue: string, maxOpenTasks: number): Promise<QueuedCreation> {
    if (this.redis instanceof Cluster) throw new Error('createQueued runs on one Redis, not on a Redis Cluster');
    const record = initialRecord(task);
    const key = taskKey(this.prefix, record.taskId);
    const open = maxOpenTasks > 0 ? this.openTasksKey(record.principal) : key;
    const args = encodeTask(record, [this.channel, record.taskId, String(record.createdAt), String(record.createdAt + record.ttlMs), String(maxOpenTasks), record.principal]);
    const [outcome, held] = (await this.call(() => this.createQueuedScript([key, queue, open], args))) as [number, number?];
    if (outcome === 2) throw new InternalError(`Task id ${record.taskId} already exists`);
    return outcome === 1 ? { created: true, task: record, ...(held === undefined ? {} : { open: held }) } : { created: false, open: held! };
  }

  /**
   * A task whose job the creating replica runs itself: counted, written and its job leased to
   * `lease.token`, in one script (create-held-5.lua); one Redis only, like createQueued.
   */
  async createHeld(task: NewTask, lease: HeldJobLease, maxOpenTasks: number): Promise<QueuedCreation> {
    if (this.redis instanceof Cluster) throw new Error('createHeld runs on one Redis, not on a Redis Cluster');
    const record = initialRecord(task);
    const key = taskKey(this.prefix, record.taskId);
    const open = maxOpenTasks > 0 ? this.openTasksKey(record.principal) : key;
    const args = encodeTask(record, [
      this.channel,
      record.taskId,
      String(record.createdAt),
      String(record.createdAt + record.ttlMs),
      String(maxOpenTasks),
      record.principal,
      lease.token,
      String(lease.lockMs),
    ]);
    const [outcome, held] = (await this.call(() => this.createHeldScript([key, open, lease.leases, lease.owners, lease.workers], args))) as [number, number?];
    if (outcome === 2) throw new InternalError(`Task id ${record.taskId} already exists`);
    return outcome === 1 ? { created: true, task: record, ...(held === undefined ? {} : { open: held }) } : { created: false, open: held! };
  }

  /** One script: the principal first, then the record (read-owned-1.lua). */
  async get(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const flat = (await this.call(() => this.readOwnedScript([taskKey(this.prefix, taskId)], [principal]))) as string[] | null;
    const task = flat === null ? undefined : decodeFlatTask(flat);
    return task && !isExpired(task, Date.now()) ? task : undefined;
  }

  /**
   * One script that reads the fields a status answer shows, instead of the whole record (whose
   * arguments and capabilities a poll never shows), after checking the principal (poll-owned-1.lua).
   * A task waiting on input comes whole, since its outstanding requests are fields of their own.
   */
  async poll(taskId: string, principal: string): Promise<PolledTask | undefined> {
    const key = taskKey(this.prefix, taskId);
    const reply = (await this.call(() => this.pollOwnedScript([key], POLL_ARGS.concat(principal)))) as PollReply | null;
    if (reply === null) return undefined;
    const task = Array.isArray(reply[0]) ? decodePolledHash(taskId, hashOfFlat(reply[0]), principal) : decodePolled(taskId, reply as Array<string | null>, principal);
    return task && !isExpired(task, Date.now()) ? task : undefined;
  }

  async load(taskId: string): Promise<TaskRecord | undefined> {
    const hash = await this.call(() => this.redis.hgetall(taskKey(this.prefix, taskId)));
    const task = decodeTask(hash);
    // Redis removes the key on its own clock; the deadline holds from the first millisecond on ours.
    return task && !isExpired(task, Date.now()) ? task : undefined;
  }

  async markStarted(taskId: string, now: number): Promise<TaskRecord | undefined> {
    const reply = await this.run('mark-started', taskId, now, [statusList(LIVE_STATUSES)]);
    return reply === null ? undefined : decodeFlatTask(reply as string[]);
  }

  async bindUpstream(taskId: string, upstreamTaskId: string, upstreamSessionId: string, now: number): Promise<boolean> {
    return (await this.run('bind-upstream', taskId, now, [statusList(LIVE_STATUSES), upstreamTaskId, upstreamSessionId])) === 1;
  }

  async setStatusMessage(taskId: string, statusMessage: string, now: number): Promise<void> {
    await this.run('set-status-message', taskId, now, [statusList(LIVE_STATUSES), statusMessage]);
  }

  async requestInput(taskId: string, key: string, request: InputRequest, now: number): Promise<boolean> {
    const args = [statusList(REQUEST_INPUT_FROM), 'input_required', key, JSON.stringify(request)];
    return (await this.run('request-input', taskId, now, args)) === 1;
  }

  async answerInput(
    taskId: string,
    principal: string,
    answers: Record<string, unknown>,
    now: number,
  ): Promise<AnswerOutcome | undefined> {
    const args = [principal, statusList(LIVE_STATUSES), statusList(RESUME_FROM), 'working'];
    for (const [key, answer] of Object.entries(answers)) args.push(key, encodeAnswer(answer));
    const reply = await this.run('answer-input', taskId, now, args);
    if (reply === null) return undefined;
    const [applied, hash] = reply as [string[], string[]];
    return { applied, task: decodeFlatTask(hash)! };
  }

  async withdrawInput(taskId: string, key: string, now: number): Promise<void> {
    const args = [statusList(LIVE_STATUSES), statusList(RESUME_FROM), 'working', key];
    await this.run('withdraw-input', taskId, now, args);
  }

  async finish(taskId: string, outcome: TaskOutcome, now: number): Promise<boolean> {
    const args = [statusList(sourcesOf(outcome.status)), outcome.status, ...encodeOutcome(outcome)];
    const principal = await this.run('finish', taskId, now, args);
    if (typeof principal !== 'string') return false;
    this.releaseQuietly(principal, taskId);
    return true;
  }

  async cancel(
    taskId: string,
    principal: string,
    statusMessage: string,
    now: number,
    awaitingUpstream = statusMessage,
  ): Promise<CancelOutcome | undefined> {
    const args = [principal, statusList(CANCEL_FROM), 'cancelled', statusMessage, awaitingUpstream];
    const reply = await this.run('cancel', taskId, now, args);
    if (reply === null) return undefined;
    const [changed, hash] = reply as [number, string[]];
    const task = decodeFlatTask(hash)!;
    if (changed === 1 && task.status === 'cancelled') this.releaseQuietly(principal, taskId);
    return { changed: changed === 1, task };
  }

  async touchSession(
    taskId: string,
    principal: string,
    sessionId: string,
    now: number,
  ): Promise<TaskRecord | undefined> {
    const reply = await this.run('touch-session', taskId, now, [principal, sessionId]);
    return reply === null ? undefined : decodeFlatTask(reply as string[]);
  }

  async holdOpen(kind: OpenKind, principal: string, member: string, lapsesAt: number, limit: number, now: number): Promise<HoldOutcome> {
    const key = kind === 'tasks' ? this.openTasksKey(principal) : openKey(this.prefix, kind, principal);
    const [held, open] = (await this.call(() => this.holdOpenScript([key], [String(now), String(limit), member, String(lapsesAt)]))) as [number, number];
    return { held: held === 1, open };
  }

  async releaseOpen(kind: OpenKind, principal: string, member: string): Promise<void> {
    await this.call(() => this.redis.zrem(openKey(this.prefix, kind, principal), member));
  }

  subscribe(listener: (change: TaskChange) => void): Unsubscribe {
    const unsubscribe = this.listeners.add(listener);
    this.subscription.listen().catch(() => {}); // only rejects once closed, when no change can arrive anyway
    return unsubscribe;
  }

  /**
   * Resolves once this store receives the changes of every replica. Changes published before
   * that are not delivered, so a caller that must not miss one awaits this before reading state.
   */
  subscriptionReady(): Promise<void> {
    return this.subscription.listen();
  }

  ping(): Promise<boolean> {
    return pingRedis(this.redis);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all([this.subscription.close(), this.ownsClient ? disconnect(this.redis) : undefined]);
  }

  private deliver(message: string): void {
    let change: TaskChange;
    try {
      change = JSON.parse(message) as TaskChange;
    } catch {
      return; // Not from our scripts; a stray publisher must not crash the process.
    }
    this.listeners.emit(change);
  }

  /** Every creation needs its principal's open-task key: a hash, computed once per principal (bounded). */
  private openTasksKey(principal: string): string {
    let key = this.openTaskKeys.get(principal);
    if (key === undefined) {
      if (this.openTaskKeys.size >= OPEN_KEYS_CACHED) this.openTaskKeys.clear();
      key = openKey(this.prefix, 'tasks', principal);
      this.openTaskKeys.set(principal, key);
    }
    return key;
  }

  /** A task that ended stops counting; a lost release only lasts until the task's expiry. */
  private releaseQuietly(principal: string, taskId: string): void {
    this.releaseOpen('tasks', principal, taskId).catch(() => undefined);
  }

  private run(operation: Operation, taskId: string, now: number, args: readonly string[]): Promise<unknown> {
    const key = taskKey(this.prefix, taskId);
    return this.call(() => this.scripts[operation]([key], [this.channel, taskId, String(now), ...args]));
  }

  private call<T>(command: () => Promise<T>): Promise<T> {
    return callRedis('Task store', this.redis, command);
  }
}
