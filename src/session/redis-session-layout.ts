import type { RequestCancel, SessionRecord, StreamMeta } from './session-store.js';

/**
 * Where a session lies in Redis. Every key of a session carries the hash tag `{s:<sessionId>}`,
 * so each script touches one cluster slot; a task's result-stream marks carry the task's tag,
 * the same slot as the task itself.
 */
export interface SessionKeys {
  /** HASH: the record; PEXPIRE idleTtlMs, refreshed by every get. */
  record: string;
  /** ZSET task id -> createdAt: the `tasks/list` index. */
  tasks: string;
  /** ZSET task id -> createdAt + retention: when each index entry goes. */
  taskExpiry: string;
  /** ZSET task id -> until when the session's streams deliver the task's pushes. */
  watch: string;
  /** STRING: the session's event counter, shared by all its streams. */
  seq: string;
  /** HASH stream id -> stored meta (see encodeStreamMeta). */
  streams: string;
  /** ZSET stream id -> until when its log is kept. */
  streamExpiry: string;
  /** HASH stream id -> until (epoch ms) while the stream is open. */
  live: string;
  /** HASH push id -> the stream that claimed its delivery. */
  pushes: string;
  /** The beginning of every stream log's key; the log of stream `x` is `streamBase + x`. */
  streamBase: string;
}

export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  const record = `${prefix}:sess:{s:${sessionId}}`;
  return {
    record,
    tasks: `${record}:tasks`,
    taskExpiry: `${record}:tasks-expiry`,
    watch: `${record}:watch`,
    seq: `${record}:seq`,
    streams: `${record}:streams`,
    streamExpiry: `${record}:streams-expiry`,
    streamBase: `${record}:stream:`,
    live: `${record}:live`,
    pushes: `${record}:pushes`,
  };
}

/** LIST of events, each `{"seq":n,"data":"..."}`, oldest first. */
export function streamKey(keys: SessionKeys, streamId: string): string {
  return keys.streamBase + streamId;
}

/** HASH holder -> until (epoch ms) of the tasks/result streams open for a task. */
export function resultStreamKey(prefix: string, taskId: string): string {
  return `${prefix}:rs:{${taskId}}`;
}

/**
 * A stream's index entry: its retention first (the scripts read it with a pattern to renew the
 * log on every append), then what it was opened for.
 */
export function encodeStreamMeta(meta: StreamMeta, retentionMs: number): string {
  return JSON.stringify({ retentionMs, meta });
}

export function decodeStreamMeta(stored: string): StreamMeta {
  return (JSON.parse(stored) as { meta: StreamMeta }).meta;
}

/** A logged event; the Lua side wraps the data (a JSON string) with its seq. */
export function decodeEvent(stored: string): { seq: number; data: string } {
  return JSON.parse(stored) as { seq: number; data: string };
}

const STRING_FIELDS = ['sessionId', 'principal', 'protocolVersion', 'upstreamSessionId'] as const;
const JSON_FIELDS = ['clientInfo', 'clientCapabilities'] as const;
const STRING_SET = new Set<string>(STRING_FIELDS);
const JSON_SET = new Set<string>(JSON_FIELDS);

type Patch = Partial<Pick<SessionRecord, 'upstreamSessionId' | 'usesTasksCreate'>>;

/** Field/value pairs for HSET; absent optional fields are not written. */
export function encodeSession(session: SessionRecord): string[] {
  const fields: string[] = [];
  for (const name of STRING_FIELDS) {
    const value = session[name];
    if (value !== undefined) fields.push(name, value);
  }
  for (const name of JSON_FIELDS) {
    const value = session[name];
    if (value !== undefined) fields.push(name, JSON.stringify(value));
  }
  if (session.usesTasksCreate !== undefined) fields.push('usesTasksCreate', session.usesTasksCreate ? '1' : '0');
  fields.push('createdAt', String(session.createdAt));
  return fields;
}

/** A patch as fields to set and fields to remove (a key given as `undefined` clears the field). */
export function encodePatch(patch: Patch): { set: string[]; remove: string[] } {
  const set: string[] = [];
  const remove: string[] = [];
  if (Object.hasOwn(patch, 'upstreamSessionId')) {
    if (patch.upstreamSessionId === undefined) remove.push('upstreamSessionId');
    else set.push('upstreamSessionId', patch.upstreamSessionId);
  }
  if (Object.hasOwn(patch, 'usesTasksCreate')) {
    if (patch.usesTasksCreate === undefined) remove.push('usesTasksCreate');
    else set.push('usesTasksCreate', patch.usesTasksCreate ? '1' : '0');
  }
  return { set, remove };
}

/** The record in a flat HGETALL reply. */
export function decodeSession(flat: readonly string[]): SessionRecord {
  const record: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = flat[i]!;
    const value = flat[i + 1]!;
    if (STRING_SET.has(field)) record[field] = value;
    else if (JSON_SET.has(field)) record[field] = JSON.parse(value);
    else if (field === 'usesTasksCreate') record[field] = value === '1';
    else if (field === 'createdAt') record[field] = Number(value);
  }
  return record as unknown as SessionRecord;
}

/**
 * The fleet's index of session deadlines, so that a lapsed session's upstream session is closed
 * (Redis keyspace notifications are not delivered reliably). Both keys share one hash tag: one
 * slot, one script.
 */
export interface SessionIndexKeys {
  /** ZSET session id -> when to look at it again (its idle deadline, as last known). */
  due: string;
  /** HASH session id -> JSON `{principal, upstreamSessionId}`: what its clean-up needs. */
  meta: string;
}

export function sessionIndexKeys(prefix: string): SessionIndexKeys {
  return { due: `${prefix}:sess-due:{sessions}`, meta: `${prefix}:sess-meta:{sessions}` };
}

/** The channel of the sessions' request cancels; one per prefix, every replica subscribed once. */
export function cancelChannel(prefix: string): string {
  return `${prefix}:sess-cancels`;
}

export function encodeCancel(cancel: RequestCancel): string {
  return JSON.stringify({ sessionId: cancel.sessionId, requestId: cancel.requestId });
}

/** A published cancel; undefined for anything else on the channel (a stray publisher must not crash a replica). */
export function decodeCancel(message: string): RequestCancel | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { sessionId, requestId } = parsed as Record<string, unknown>;
  if (typeof sessionId !== 'string' || (typeof requestId !== 'string' && typeof requestId !== 'number')) return undefined;
  return { sessionId, requestId };
}
