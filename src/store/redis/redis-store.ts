import { Redis, ReplyError } from 'ioredis';
import { InternalError, UnavailableError } from '../../core/errors.js';
import { isExpired, type InputRequest, type NewTask, type TaskRecord, type TaskStatus } from '../../core/task.js';
import { initialRecord } from '../initial-record.js';
import { ListenerSet } from '../listeners.js';
import type {
  AnswerOutcome,
  CancelOutcome,
  TaskChange,
  TaskOutcome,
  TaskStore,
  Unsubscribe,
} from '../task-store.js';
import { sourcesOf } from '../../mapping/transitions.js';
import { CANCEL_FROM, LIVE_STATUSES, REQUEST_INPUT_FROM, RESUME_FROM } from '../transition-rules.js';
import { decodeFlatTask, decodeTask, encodeAnswer, encodeOutcome, encodeTask } from './codec.js';
import { checkPrefix, DEFAULT_PREFIX, eventsChannel, taskKey } from './keys.js';
import { defineTaskScripts, type Operation, type RunScript } from './scripts.js';

export interface RedisTaskStoreOptions {
  /** Used when `redis` is not given; the store then owns (and on close quits) that connection. */
  url?: string;
  /** A client the caller owns: the store defines its scripts on it but never quits it. */
  redis?: Redis;
  /** Prefix of every key and of the events channel; default `mts`. */
  prefix?: string;
}

/** A health check must answer quickly even while ioredis holds commands back during a reconnect. */
const PING_TIMEOUT_MS = 1_000;

function statusList(statuses: readonly TaskStatus[]): string {
  return statuses.join(',');
}

/**
 * The production store: one hash per task, every change one Lua script that checks the status,
 * writes and publishes atomically. Reads are a single HGETALL.
 */
export class RedisTaskStore implements TaskStore {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly scripts: Record<Operation, RunScript>;
  private readonly listeners = new ListenerSet<TaskChange>();
  private subscriber?: Redis;
  private subscription?: Promise<void>;
  private closed = false;

  constructor(options: RedisTaskStoreOptions = {}) {
    // Checked before connecting, so that a bad prefix leaves no connection behind.
    this.prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX);
    this.ownsClient = options.redis === undefined;
    this.redis = options.redis ?? new Redis(options.url ?? 'redis://127.0.0.1:6379');
    // Connection trouble reaches callers as UnavailableError and through ping(); without a
    // listener ioredis would also print every failed reconnect attempt.
    if (this.ownsClient) this.redis.on('error', () => {});
    this.channel = eventsChannel(this.prefix);
    this.scripts = defineTaskScripts(this.redis);
  }

  async create(task: NewTask): Promise<TaskRecord> {
    const record = initialRecord(task);
    const fields = encodeTask(record);
    const expiry = String(record.createdAt + record.ttlMs);
    const created = await this.run('create', record.taskId, record.createdAt, [expiry, ...fields]);
    if (created !== 1) throw new InternalError(`Task id ${record.taskId} already exists`);
    // Decoded from what was written, so the caller holds exactly what every replica reads.
    return decodeFlatTask(fields)!;
  }

  async get(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const task = await this.load(taskId);
    return task?.principal === principal ? task : undefined;
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
    return (await this.run('finish', taskId, now, args)) === 1;
  }

  async cancel(
    taskId: string,
    principal: string,
    statusMessage: string,
    now: number,
  ): Promise<CancelOutcome | undefined> {
    const args = [principal, statusList(CANCEL_FROM), 'cancelled', statusMessage];
    const reply = await this.run('cancel', taskId, now, args);
    if (reply === null) return undefined;
    const [changed, hash] = reply as [number, string[]];
    return { changed: changed === 1, task: decodeFlatTask(hash)! };
  }

  subscribe(listener: (change: TaskChange) => void): Unsubscribe {
    const unsubscribe = this.listeners.add(listener);
    this.listen().catch(() => {}); // only rejects once closed, when no change can arrive anyway
    return unsubscribe;
  }

  /**
   * Resolves once this store receives the changes of every replica. Changes published before
   * that are not delivered, so a caller that must not miss one awaits this before reading state.
   */
  subscriptionReady(): Promise<void> {
    return this.listen();
  }

  async ping(): Promise<boolean> {
    const status = this.redis.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), PING_TIMEOUT_MS);
    });
    try {
      return (await Promise.race([this.redis.ping(), timeout])) === 'PONG';
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const owned = [this.subscriber, this.ownsClient ? this.redis : undefined];
    await Promise.all(owned.map((client) => client && disconnect(client)));
  }

  /** One lazily opened subscriber connection serves every listener of this store. */
  private listen(): Promise<void> {
    // After close() a new connection would never be quit.
    if (this.closed) return Promise.reject(new Error('Task store is closed'));
    if (!this.subscription) {
      // No retry limit: SUBSCRIBE waits out an outage instead of failing and leaving listeners deaf.
      const subscriber = this.redis.duplicate({ maxRetriesPerRequest: null });
      subscriber.on('error', () => {}); // as for the command connection, see the constructor
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.channel) this.deliver(message);
      });
      this.subscriber = subscriber;
      this.subscription = subscriber.subscribe(this.channel).then(() => undefined);
      // Only close() makes SUBSCRIBE fail; whoever awaits subscriptionReady() still sees the rejection.
      this.subscription.catch(() => {});
    }
    return this.subscription;
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

  private run(operation: Operation, taskId: string, now: number, args: readonly string[]): Promise<unknown> {
    const key = taskKey(this.prefix, taskId);
    return this.call(() => this.scripts[operation](key, [this.channel, taskId, String(now), ...args]));
  }

  /** Redis errors are bugs; anything else means Redis could not be reached, which a client may retry. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (error instanceof ReplyError) throw error;
      const unavailable = new UnavailableError('Task store');
      unavailable.cause = error;
      throw unavailable;
    }
  }
}

/** QUIT waits for queued commands, which never run while Redis is down; then only disconnect ends it. */
async function disconnect(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') return client.disconnect();
  await client.quit().catch(() => client.disconnect());
}
