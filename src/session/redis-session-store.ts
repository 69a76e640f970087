import { InternalError } from '../core/errors.js';
import {
  callRedis,
  disconnect,
  openRedis,
  type RedisClientOptions,
  type RedisConnection,
} from '../store/redis/connection.js';
import { checkPrefix, DEFAULT_PREFIX } from '../store/redis/keys.js';
import { loadScripts, type RunKeysScript } from '../store/redis/scripts.js';
import { ListenerSet } from '../store/listeners.js';
import { ChannelSubscription } from '../store/redis/channel-subscription.js';
import { DEFAULT_MAX_EVENTS, formatEventId, parseEventId, positive } from './common.js';
import {
  cancelChannel,
  decodeCancel,
  decodeEvent,
  decodeSession,
  decodeStreamMeta,
  encodeCancel,
  encodePatch,
  encodeSession,
  encodeStreamMeta,
  resultStreamKey,
  sessionIndexKeys,
  sessionKeys,
  streamKey,
  type SessionKeys,
} from './redis-session-layout.js';
import type { DueSession, DueSessions, RequestCancel, SessionRecord, SessionStore, StreamEvent, StreamMeta, TaskPageEntry } from './session-store.js';

export interface RedisSessionStoreOptions extends RedisClientOptions {
  /** Prefix of every key; default `mts`, the task store's, with which it shares a Redis. */
  prefix?: string;
  /** How many events each stream's replay log keeps; default 1000. */
  maxEvents?: number;
}

const SCRIPTS = [
  'create',
  'get',
  'update',
  'delete',
  'add-task',
  'list-tasks',
  'watch-task',
  'watched-tasks',
  'open-stream',
  'append-event',
  'events-after',
  'keep-stream-open',
  'close-stream',
  'claim-push',
  'hold-result-stream',
  'release-result-stream',
  'has-result-stream',
  'index-session',
  'unindex-session',
  'due-sessions',
  'settle-due',
] as const;
type Script = (typeof SCRIPTS)[number];

const NO_TTL_RECHECK_MS = 60_000;

/**
 * Sessions in Redis (layout in `redis-session-layout.ts`). Every operation is one command or one
 * Lua script over the keys of one session (or one task), so any replica serves any session.
 */
export class RedisSessionStore implements SessionStore {
  private readonly redis: RedisConnection;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly maxEvents: number;
  private readonly scripts: Record<Script, RunKeysScript>;
  private readonly channel: string;
  private readonly cancels = new ListenerSet<RequestCancel>();
  /** Opened with the first `onRequestCancel`: a replica whose upstream keeps sessions never opens it. */
  private readonly subscription: ChannelSubscription;

  constructor(options: RedisSessionStoreOptions = {}) {
    // Checked before connecting, so that bad options leave no connection behind.
    this.prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX);
    this.maxEvents = positive('maxEvents', options.maxEvents ?? DEFAULT_MAX_EVENTS);
    const { redis, owned } = openRedis(options);
    this.redis = redis;
    this.ownsClient = owned;
    this.scripts = loadScripts(redis, new URL('./lua/', import.meta.url), SCRIPTS);
    this.channel = cancelChannel(this.prefix);
    this.subscription = new ChannelSubscription(redis, this.channel, 'Session store', (message) => {
      const cancel = decodeCancel(message);
      if (cancel) this.cancels.emit(cancel);
    });
  }

  async create(session: SessionRecord, idleTtlMs: number): Promise<void> {
    const ttl = positive('idleTtlMs', idleTtlMs);
    // Indexed first (another slot): a record whose write then fails is still cleaned up, upstream included.
    const due: DueSession = { sessionId: session.sessionId, principal: session.principal, upstreamSessionId: session.upstreamSessionId };
    await this.run('index-session', this.indexKeys(), [session.sessionId, ttl, JSON.stringify(due)]);
    const created = await this.run('create', [this.keys(session.sessionId).record], [ttl, ...encodeSession(session)]);
    if (created !== 1) throw new InternalError(`Session id ${session.sessionId} already exists`);
  }

  async get(sessionId: string, idleTtlMs: number): Promise<SessionRecord | undefined> {
    const ttl = positive('idleTtlMs', idleTtlMs);
    const reply = await this.run('get', [this.keys(sessionId).record], [ttl]);
    return reply === null ? undefined : decodeSession(reply as string[]);
  }

  async update(
    sessionId: string,
    patch: Partial<Pick<SessionRecord, 'upstreamSessionId' | 'usesTasksCreate'>>,
  ): Promise<void> {
    const { set, remove } = encodePatch(patch);
    if (set.length === 0 && remove.length === 0) return;
    await this.run('update', [this.keys(sessionId).record], [set.length / 2, ...set, ...remove]);
  }

  async delete(sessionId: string): Promise<boolean> {
    const keys = this.keys(sessionId);
    const all = [
      keys.record,
      keys.tasks,
      keys.taskExpiry,
      keys.watch,
      keys.seq,
      keys.streams,
      keys.streamExpiry,
      keys.streamBase,
      keys.live,
      keys.pushes,
    ];
    const existed = (await this.run('delete', all, [])) === 1;
    await this.run('unindex-session', this.indexKeys(), [sessionId]);
    return existed;
  }

  async sweepDue(limit: number): Promise<DueSessions> {
    const flat = (await this.run('due-sessions', this.indexKeys(), [Math.max(1, Math.floor(limit))])) as string[];
    const swept: DueSessions = { lapsed: [], extended: [] };
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const sessionId = flat[i]!;
      const due = flat[i + 1] ? (JSON.parse(flat[i + 1]!) as DueSession) : { sessionId, principal: '' };
      const ttl = await callRedis('Session store', this.redis, () => this.redis.pttl(this.keys(sessionId).record));
      // A record without a TTL never comes from this store; it is looked at again a minute later.
      const settled = (await this.run('settle-due', this.indexKeys(), [sessionId, ttl === -1 ? NO_TTL_RECHECK_MS : ttl])) as number;
      if (settled === -1) swept.lapsed.push(due);
      else if (settled > 0) swept.extended.push({ ...due, dueAt: settled });
    }
    return swept;
  }

  async addTask(sessionId: string, entry: TaskPageEntry, retentionMs: number): Promise<void> {
    const keys = this.keys(sessionId);
    const retention = positive('retentionMs', retentionMs);
    await this.run('add-task', [keys.tasks, keys.taskExpiry], [entry.taskId, entry.createdAt, retention]);
  }

  async listTasks(sessionId: string, after: TaskPageEntry | undefined, limit: number): Promise<TaskPageEntry[]> {
    const keys = this.keys(sessionId);
    const args: (string | number)[] = [Math.max(0, Math.floor(limit))];
    if (after) args.push(after.createdAt, after.taskId);
    const flat = (await this.run('list-tasks', [keys.tasks, keys.taskExpiry], args)) as string[];
    const page: TaskPageEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) page.push({ taskId: flat[i]!, createdAt: Number(flat[i + 1]) });
    return page;
  }

  async watchTask(sessionId: string, taskId: string, retentionMs: number): Promise<void> {
    await this.run('watch-task', [this.keys(sessionId).watch], [taskId, positive('retentionMs', retentionMs)]);
  }

  async watchedTasks(sessionId: string): Promise<string[]> {
    return (await this.run('watched-tasks', [this.keys(sessionId).watch], [])) as string[];
  }

  async openStream(sessionId: string, streamId: string, meta: StreamMeta, retentionMs: number): Promise<void> {
    const keys = this.keys(sessionId);
    const retention = positive('retentionMs', retentionMs);
    await this.run(
      'open-stream',
      [keys.streams, keys.streamExpiry, keys.seq, streamKey(keys, streamId), keys.streamBase],
      [streamId, encodeStreamMeta(meta, retention), retention],
    );
  }

  async appendEvent(sessionId: string, streamId: string, data: string): Promise<string> {
    const keys = this.keys(sessionId);
    const seq = await this.run(
      'append-event',
      [keys.streams, keys.streamExpiry, keys.seq, streamKey(keys, streamId), keys.record],
      [streamId, JSON.stringify(data), this.maxEvents],
    );
    return formatEventId(streamId, seq as number);
  }

  async eventsAfter(
    sessionId: string,
    eventId: string,
  ): Promise<{ streamId: string; meta: StreamMeta; events: StreamEvent[] } | undefined> {
    const parsed = parseEventId(eventId);
    if (!parsed) return undefined;
    const { streamId, seq } = parsed;
    const keys = this.keys(sessionId);
    const reply = await this.run('events-after', [keys.streams, streamKey(keys, streamId), keys.seq, keys.streamExpiry],
      [streamId, seq, this.maxEvents],
    );
    if (reply === null) return undefined;
    const [stored, ...logged] = reply as string[];
    const events = logged.map((each) => {
      const event = decodeEvent(each);
      return { eventId: formatEventId(streamId, event.seq), data: event.data };
    });
    return { streamId, meta: decodeStreamMeta(stored!), events };
  }

  async keepStreamOpen(sessionId: string, streamId: string, ttlMs: number): Promise<void> {
    await this.run('keep-stream-open', [this.keys(sessionId).live], [streamId, positive('ttlMs', ttlMs)]);
  }

  async closeStream(sessionId: string, streamId: string): Promise<void> {
    await this.run('close-stream', [this.keys(sessionId).live], [streamId]);
  }

  async claimPush(sessionId: string, pushId: string, streamId: string, retentionMs: number): Promise<boolean> {
    const keys = this.keys(sessionId);
    return (await this.run('claim-push', [keys.pushes, keys.live], [pushId, streamId, positive('retentionMs', retentionMs)])) === 1;
  }

  async holdResultStream(taskId: string, holder: string, ttlMs: number): Promise<void> {
    const ttl = positive('ttlMs', ttlMs);
    await this.run('hold-result-stream', [resultStreamKey(this.prefix, taskId)], [holder, ttl]);
  }

  async releaseResultStream(taskId: string, holder: string): Promise<void> {
    await this.run('release-result-stream', [resultStreamKey(this.prefix, taskId)], [holder]);
  }

  async hasResultStream(taskId: string): Promise<boolean> {
    return (await this.run('has-result-stream', [resultStreamKey(this.prefix, taskId)], [])) === 1;
  }

  async publishCancel(cancel: RequestCancel): Promise<void> {
    await callRedis('Session store', this.redis, () => this.redis.publish(this.channel, encodeCancel(cancel)));
  }

  onRequestCancel(listener: (cancel: RequestCancel) => void): () => void {
    const unsubscribe = this.cancels.add(listener);
    this.subscription.listen().catch(() => {}); // only rejects once closed, when no cancel can arrive anyway
    return unsubscribe;
  }

  requestCancelsReady(): Promise<void> {
    return this.subscription.listen();
  }

  async close(): Promise<void> {
    this.cancels.clear();
    await Promise.all([this.subscription.close(), this.ownsClient ? disconnect(this.redis) : undefined]);
  }

  private indexKeys(): string[] {
    const { due, meta } = sessionIndexKeys(this.prefix);
    return [due, meta];
  }

  private keys(sessionId: string): SessionKeys {
    return sessionKeys(this.prefix, sessionId);
  }

  private run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return callRedis('Session store', this.redis, () => this.scripts[script](keys, args.map(String)));
  }
}
