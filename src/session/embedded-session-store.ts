import { InternalError } from '../core/errors.js';
import { ExpiryTimers } from '../store/embedded/expiry-timers.js';
import { ListenerSet } from '../store/listeners.js';
import { compareBytes, DEFAULT_MAX_EVENTS, formatEventId, parseEventId, positive } from './common.js';
import type { DueSession, DueSessions, RequestCancel, SessionRecord, SessionStore, StreamEvent, StreamMeta, TaskPageEntry } from './session-store.js';

export interface EmbeddedSessionStoreOptions {
  /** How many events each stream's replay log keeps; default 1000. */
  maxEvents?: number;
}

interface StreamLog {
  meta: StreamMeta;
  retentionMs: number;
  /** Until when the log is kept; every append renews it. */
  expiresAt: number;
  events: { seq: number; data: string }[];
}

/** Everything of one session; each part expires on its own, as the keys of the Redis layout do. */
interface Bucket {
  record?: SessionRecord;
  recordExpiresAt: number;
  tasks: Map<string, { createdAt: number; expiresAt: number }>;
  /** Task id -> until when the session watches it. */
  watch: Map<string, number>;
  streams: Map<string, StreamLog>;
  seq: number;
  /** Stream id -> until while it is open. */
  live: Map<string, number>;
  /** Push id -> the stream that claimed its delivery, kept until `expiresAt`. */
  pushes: Map<string, { streamId: string; expiresAt: number }>;
  /** The counter restarts after this: no log it could collide with is left by then. */
  seqExpiresAt: number;
}

/**
 * The in-process session store, with the same semantics as the Redis one. Expired parts go
 * lazily when touched, and a bucket's unref'd timer removes the whole bucket at its last deadline,
 * so nothing leaks and no timer keeps the process alive.
 */
export class EmbeddedSessionStore implements SessionStore {
  private readonly sessions = new Map<string, Bucket>();
  /** Task id -> holder -> until. */
  private readonly resultStreams = new Map<string, Map<string, number>>();
  private readonly maxEvents: number;
  /** Session id -> what its clean-up needs, and when to look at it again; kept past the record. */
  private readonly due = new Map<string, { session: DueSession; dueAt: number }>();
  private readonly sessionTimers = new ExpiryTimers((sessionId) => this.sweepSession(sessionId));
  private readonly resultTimers = new ExpiryTimers((taskId) => this.sweepResultStreams(taskId));
  private readonly cancels = new ListenerSet<RequestCancel>();

  constructor(options: EmbeddedSessionStoreOptions = {}) {
    this.maxEvents = positive('maxEvents', options.maxEvents ?? DEFAULT_MAX_EVENTS);
  }

  /** Sessions with anything left (a record, index entries, watches, logs, or a deadline not swept yet), for leak checks. */
  get size(): number {
    return this.sessions.size + this.resultStreams.size + this.due.size;
  }

  async create(session: SessionRecord, idleTtlMs: number): Promise<void> {
    const ttl = positive('idleTtlMs', idleTtlMs);
    const now = Date.now();
    const bucket = this.bucket(session.sessionId, true);
    if (this.liveRecord(bucket, now)) throw new InternalError(`Session id ${session.sessionId} already exists`);
    bucket.record = withoutUndefined(structuredClone(session));
    bucket.recordExpiresAt = now + ttl;
    this.schedule(session.sessionId, bucket);
    const { sessionId, principal, upstreamSessionId } = session;
    this.due.set(sessionId, { session: upstreamSessionId === undefined ? { sessionId, principal } : { sessionId, principal, upstreamSessionId }, dueAt: now + ttl });
  }

  async get(sessionId: string, idleTtlMs: number): Promise<SessionRecord | undefined> {
    const ttl = positive('idleTtlMs', idleTtlMs);
    const now = Date.now();
    const bucket = this.bucket(sessionId, false);
    const record = bucket && this.liveRecord(bucket, now);
    if (!bucket || !record) return undefined;
    bucket.recordExpiresAt = now + ttl;
    this.schedule(sessionId, bucket);
    return structuredClone(record);
  }

  async update(
    sessionId: string,
    patch: Partial<Pick<SessionRecord, 'upstreamSessionId' | 'usesTasksCreate'>>,
  ): Promise<void> {
    const bucket = this.bucket(sessionId, false);
    const record = bucket && this.liveRecord(bucket, Date.now());
    if (!record) return;
    if (Object.hasOwn(patch, 'upstreamSessionId')) {
      if (patch.upstreamSessionId === undefined) delete record.upstreamSessionId;
      else record.upstreamSessionId = patch.upstreamSessionId;
    }
    if (Object.hasOwn(patch, 'usesTasksCreate')) {
      if (patch.usesTasksCreate === undefined) delete record.usesTasksCreate;
      else record.usesTasksCreate = patch.usesTasksCreate;
    }
  }

  async delete(sessionId: string): Promise<boolean> {
    const bucket = this.bucket(sessionId, false);
    const existed = bucket !== undefined && this.liveRecord(bucket, Date.now()) !== undefined;
    this.sessions.delete(sessionId);
    this.sessionTimers.cancel(sessionId);
    this.due.delete(sessionId);
    return existed;
  }

  async sweepDue(limit: number): Promise<DueSessions> {
    const now = Date.now();
    const swept: DueSessions = { lapsed: [], extended: [] };
    for (const [sessionId, entry] of this.due) {
      if (swept.lapsed.length + swept.extended.length >= limit) break;
      if (entry.dueAt > now) continue;
      const bucket = this.sessions.get(sessionId);
      if (bucket && this.liveRecord(bucket, now)) {
        entry.dueAt = bucket.recordExpiresAt;
        swept.extended.push({ ...entry.session, dueAt: entry.dueAt });
      } else {
        this.due.delete(sessionId);
        swept.lapsed.push(entry.session);
      }
    }
    return swept;
  }

  async addTask(sessionId: string, entry: TaskPageEntry, retentionMs: number): Promise<void> {
    const retention = positive('retentionMs', retentionMs);
    const now = Date.now();
    const bucket = this.bucket(sessionId, true);
    pruneTasks(bucket, now);
    const expiresAt = entry.createdAt + retention;
    if (expiresAt > now) bucket.tasks.set(entry.taskId, { createdAt: entry.createdAt, expiresAt });
    this.schedule(sessionId, bucket);
  }

  async listTasks(sessionId: string, after: TaskPageEntry | undefined, limit: number): Promise<TaskPageEntry[]> {
    const bucket = this.bucket(sessionId, false);
    if (!bucket || limit <= 0) return [];
    pruneTasks(bucket, Date.now());
    const entries = [...bucket.tasks].map(([taskId, { createdAt }]) => ({ taskId, createdAt }));
    entries.sort(newestFirst);
    const start = after ? entries.filter((entry) => newestFirst(entry, after) <= 0).length : 0;
    return entries.slice(start, start + Math.floor(limit));
  }

  async watchTask(sessionId: string, taskId: string, retentionMs: number): Promise<void> {
    const retention = positive('retentionMs', retentionMs);
    const now = Date.now();
    const bucket = this.bucket(sessionId, true);
    pruneWatch(bucket, now);
    bucket.watch.set(taskId, Math.max(bucket.watch.get(taskId) ?? 0, now + retention));
    this.schedule(sessionId, bucket);
  }

  async watchedTasks(sessionId: string): Promise<string[]> {
    const bucket = this.bucket(sessionId, false);
    if (!bucket) return [];
    const now = Date.now();
    return [...bucket.watch].filter(([, until]) => until > now).map(([taskId]) => taskId);
  }

  async openStream(sessionId: string, streamId: string, meta: StreamMeta, retentionMs: number): Promise<void> {
    const retention = positive('retentionMs', retentionMs);
    const now = Date.now();
    const bucket = this.bucket(sessionId, true);
    for (const [id, log] of bucket.streams) if (log.expiresAt <= now) bucket.streams.delete(id);
    const expiresAt = now + retention;
    const existing = bucket.streams.get(streamId);
    bucket.streams.set(streamId, {
      meta: structuredClone(meta),
      retentionMs: retention,
      expiresAt: Math.max(existing?.expiresAt ?? 0, expiresAt),
      events: existing?.events ?? [],
    });
    if (bucket.seqExpiresAt > now) bucket.seqExpiresAt = Math.max(bucket.seqExpiresAt, expiresAt);
    this.schedule(sessionId, bucket);
  }

  async appendEvent(sessionId: string, streamId: string, data: string): Promise<string> {
    const now = Date.now();
    const bucket = this.bucket(sessionId, false) ?? emptyBucket();
    if (bucket.seqExpiresAt <= now) bucket.seq = 0;
    const seq = ++bucket.seq;
    const log = bucket.streams.get(streamId);
    // As in append-event-5.lua: logged only while the stream is open; a fresh id either way.
    if (log && log.expiresAt > now) {
      log.events.push({ seq, data });
      if (log.events.length > this.maxEvents) log.events.splice(0, log.events.length - this.maxEvents);
      log.expiresAt = now + log.retentionMs;
      bucket.seqExpiresAt = Math.max(bucket.seqExpiresAt, log.expiresAt);
    }
    if (this.liveRecord(bucket, now)) bucket.seqExpiresAt = Math.max(bucket.seqExpiresAt, bucket.recordExpiresAt);
    // Neither an open stream nor the session: nothing is kept (see append-event-5.lua).
    if (this.sessions.get(sessionId) === bucket) this.schedule(sessionId, bucket);
    return formatEventId(streamId, seq);
  }

  async eventsAfter(
    sessionId: string,
    eventId: string,
  ): Promise<{ streamId: string; meta: StreamMeta; events: StreamEvent[] } | undefined> {
    const parsed = parseEventId(eventId);
    const bucket = this.bucket(sessionId, false);
    if (!parsed || !bucket) return undefined;
    const { streamId, seq } = parsed;
    const now = Date.now();
    const log = bucket.streams.get(streamId);
    if (!log || log.expiresAt <= now || log.events.length === 0) return undefined;
    if (bucket.seqExpiresAt <= now || seq > bucket.seq) return undefined;
    // As in events-after-4.lua: the client's event must be this stream's, unless it was trimmed away.
    if (log.events[0]!.seq > seq && log.events.length < this.maxEvents) return undefined;
    let first = 0;
    for (let i = log.events.length - 1; i >= 0; i--) {
      const each = log.events[i]!.seq;
      if (each <= seq) {
        if (each < seq) return undefined;
        first = i + 1;
        break;
      }
    }
    const events = log.events
      .slice(first)
      .map((event) => ({ eventId: formatEventId(streamId, event.seq), data: event.data }));
    return { streamId, meta: structuredClone(log.meta), events };
  }

  async keepStreamOpen(sessionId: string, streamId: string, ttlMs: number): Promise<void> {
    const ttl = positive('ttlMs', ttlMs);
    const bucket = this.bucket(sessionId, true);
    bucket.live.set(streamId, Date.now() + ttl);
    this.schedule(sessionId, bucket);
  }

  async closeStream(sessionId: string, streamId: string): Promise<void> {
    this.bucket(sessionId, false)?.live.delete(streamId);
  }

  async claimPush(sessionId: string, pushId: string, streamId: string, retentionMs: number): Promise<boolean> {
    const retention = positive('retentionMs', retentionMs);
    const now = Date.now();
    const bucket = this.bucket(sessionId, true);
    const owner = bucket.pushes.get(pushId);
    if (owner && owner.expiresAt > now && owner.streamId !== streamId && (bucket.live.get(owner.streamId) ?? 0) > now) return false;
    bucket.pushes.set(pushId, { streamId, expiresAt: now + retention });
    this.schedule(sessionId, bucket);
    return true;
  }

  async holdResultStream(taskId: string, holder: string, ttlMs: number): Promise<void> {
    const ttl = positive('ttlMs', ttlMs);
    const now = Date.now();
    let marks = this.resultStreams.get(taskId);
    if (!marks) this.resultStreams.set(taskId, (marks = new Map()));
    marks.set(holder, now + ttl);
    this.sweepResultStreams(taskId);
  }

  async releaseResultStream(taskId: string, holder: string): Promise<void> {
    this.resultStreams.get(taskId)?.delete(holder);
    this.sweepResultStreams(taskId);
  }

  async hasResultStream(taskId: string): Promise<boolean> {
    const now = Date.now();
    return [...(this.resultStreams.get(taskId)?.values() ?? [])].some((until) => until > now);
  }

  async publishCancel(cancel: RequestCancel): Promise<void> {
    const copy = { sessionId: cancel.sessionId, requestId: cancel.requestId };
    // Later, as from Redis: a listener never runs inside the publisher's call.
    queueMicrotask(() => this.cancels.emit(copy));
  }

  onRequestCancel(listener: (cancel: RequestCancel) => void): () => void {
    return this.cancels.add(listener);
  }

  /** Nothing to wait for: the listeners of this process hear every cancel from the moment they subscribe. */
  async requestCancelsReady(): Promise<void> {}

  async close(): Promise<void> {
    this.cancels.clear();
    this.sessionTimers.clear();
    this.resultTimers.clear();
    this.sessions.clear();
    this.resultStreams.clear();
    this.due.clear();
  }

  private bucket(sessionId: string, create: true): Bucket;
  private bucket(sessionId: string, create: false): Bucket | undefined;
  private bucket(sessionId: string, create: boolean): Bucket | undefined {
    let bucket = this.sessions.get(sessionId);
    if (!bucket && create) this.sessions.set(sessionId, (bucket = emptyBucket()));
    return bucket;
  }

  private liveRecord(bucket: Bucket, now: number): SessionRecord | undefined {
    return bucket.recordExpiresAt > now ? bucket.record : undefined;
  }

  /** The bucket's timer fires when its last part expires. */
  private schedule(sessionId: string, bucket: Bucket): void {
    this.sessionTimers.schedule(sessionId, lastDeadline(bucket));
  }

  private sweepSession(sessionId: string): void {
    const bucket = this.sessions.get(sessionId);
    if (!bucket) return;
    const now = Date.now();
    if (lastDeadline(bucket) > now) {
      this.schedule(sessionId, bucket); // extended since the timer was set
      return;
    }
    this.sessions.delete(sessionId);
  }

  /** Drops lapsed marks; the task's timer fires when its longest remaining mark lapses. */
  private sweepResultStreams(taskId: string): void {
    const marks = this.resultStreams.get(taskId);
    if (!marks) return;
    const now = Date.now();
    for (const [holder, until] of marks) if (until <= now) marks.delete(holder);
    if (marks.size > 0) {
      this.resultTimers.schedule(taskId, Math.max(...marks.values()));
    } else {
      this.resultStreams.delete(taskId);
      this.resultTimers.cancel(taskId);
    }
  }
}

function emptyBucket(): Bucket {
  return {
    recordExpiresAt: 0,
    tasks: new Map(),
    watch: new Map(),
    streams: new Map(),
    seq: 0,
    seqExpiresAt: 0,
    live: new Map(),
    pushes: new Map(),
  };
}

function lastDeadline(bucket: Bucket): number {
  let last = Math.max(bucket.recordExpiresAt, bucket.seqExpiresAt);
  for (const { expiresAt } of bucket.tasks.values()) last = Math.max(last, expiresAt);
  for (const until of bucket.watch.values()) last = Math.max(last, until);
  for (const { expiresAt } of bucket.streams.values()) last = Math.max(last, expiresAt);
  for (const until of bucket.live.values()) last = Math.max(last, until);
  for (const { expiresAt } of bucket.pushes.values()) last = Math.max(last, expiresAt);
  return last;
}

function pruneTasks(bucket: Bucket, now: number): void {
  for (const [taskId, { expiresAt }] of bucket.tasks) if (expiresAt <= now) bucket.tasks.delete(taskId);
}

function pruneWatch(bucket: Bucket, now: number): void {
  for (const [taskId, until] of bucket.watch) if (until <= now) bucket.watch.delete(taskId);
}

/** Newest first; within a millisecond by task id descending, in bytes, as Redis orders ties. */
function newestFirst(a: TaskPageEntry, b: TaskPageEntry): number {
  return b.createdAt - a.createdAt || compareBytes(b.taskId, a.taskId);
}

/** Optional fields left `undefined` are dropped, so that both stores hand back the same shape. */
function withoutUndefined(record: SessionRecord): SessionRecord {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as unknown as SessionRecord;
}
