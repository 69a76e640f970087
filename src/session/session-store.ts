import type { ClientInfo } from '../core/task.js';

/**
 * A legacy (2025-11-25 transport) client session. The shim mints the id and owns the state, in
 * the shared store, so that any replica serves any request of any session.
 */
export interface SessionRecord {
  sessionId: string;
  principal: string;
  /** The version negotiated with the client. */
  protocolVersion: string;
  clientInfo?: ClientInfo;
  clientCapabilities: Record<string, unknown>;
  /** The upstream session this client session is forwarded to; absent for a session-less upstream. */
  upstreamSessionId?: string;
  /** Set once the session speaks the tasks/create dialect; its shared methods then answer in that dialect. */
  usesTasksCreate?: boolean;
  createdAt: number;
}

/** One SSE event as written to a client stream, kept for `Last-Event-ID` replay. */
export interface StreamEvent {
  eventId: string;
  /** JSON text of one JSON-RPC message, or '' for a priming event. */
  data: string;
}

/** What a stream was opened for, so a replica that resumes it knows how to continue it. */
export type StreamMeta =
  | { kind: 'get' }
  | { kind: 'result'; taskId: string; requestId: string | number };

/** What the clean-up of a session needs once the session itself is gone. */
export interface DueSession {
  sessionId: string;
  principal: string;
  upstreamSessionId?: string;
}

/** One pass over the sessions whose idle deadline passed (src/wire/legacy/session-reaper.ts). */
export interface DueSessions {
  /** Expired or evicted: each is handed to exactly one caller in the fleet, and leaves the index. */
  lapsed: DueSession[];
  /** Used since: due again at `dueAt`. */
  extended: Array<DueSession & { dueAt: number }>;
}

/**
 * A client's `notifications/cancelled` for a request of one of its sessions, told to every
 * replica: the one running the request aborts it (src/wire/legacy/sessionless-upstream.ts).
 */
export interface RequestCancel {
  sessionId: string;
  requestId: string | number;
}

export interface TaskPageEntry {
  taskId: string;
  createdAt: number;
}

/**
 * Shared session state: the session itself, its tasks index (for `tasks/list`), the tasks it
 * watches (for pushes), its streams' event logs (for resumption), and which task currently has
 * an open `tasks/result` stream somewhere in the fleet (so pushes go to exactly one stream).
 * Every key of a session carries the session's hash tag; result-stream marks carry the task's.
 */
export interface SessionStore {
  /** Sessions expire after `idleTtlMs` without a request. */
  create(session: SessionRecord, idleTtlMs: number): Promise<void>;
  /** The session, its idle TTL refreshed; undefined when unknown, expired or deleted. */
  get(sessionId: string, idleTtlMs: number): Promise<SessionRecord | undefined>;
  update(sessionId: string, patch: Partial<Pick<SessionRecord, 'upstreamSessionId' | 'usesTasksCreate'>>): Promise<void>;
  /** Removes the session and everything under it. True when it existed. */
  delete(sessionId: string): Promise<boolean>;
  /**
   * Looks at up to `limit` sessions whose idle deadline passed: those gone (expired, evicted) are
   * claimed for clean-up, the others rescheduled. A deleted session is never among them.
   */
  sweepDue(limit: number): Promise<DueSessions>;

  /** Indexes a task created in the session (`tasks/list` shows exactly these). */
  addTask(sessionId: string, entry: TaskPageEntry, retentionMs: number): Promise<void>;
  /**
   * Newest first, strictly after `after` (the last entry of the previous page), at most `limit`.
   * Entries older than `retentionMs` are dropped on the way.
   */
  listTasks(sessionId: string, after: TaskPageEntry | undefined, limit: number): Promise<TaskPageEntry[]>;

  /** A task whose pushes the session's streams deliver (created in it, or read in it last). */
  watchTask(sessionId: string, taskId: string, retentionMs: number): Promise<void>;
  watchedTasks(sessionId: string): Promise<string[]>;

  /** Opens a stream's log; its events get ids `<streamId>_<seq>`. */
  openStream(sessionId: string, streamId: string, meta: StreamMeta, retentionMs: number): Promise<void>;
  /** Appends one event and returns its id; the log keeps the newest `maxEvents`. */
  appendEvent(sessionId: string, streamId: string, data: string): Promise<string>;
  /** The stream an event id belongs to, with the events after it; undefined when unknown. */
  eventsAfter(sessionId: string, eventId: string): Promise<{ streamId: string; meta: StreamMeta; events: StreamEvent[] } | undefined>;

  /** Marks the stream open for `ttlMs`; its holder renews it while the stream stays open. */
  keepStreamOpen(sessionId: string, streamId: string, ttlMs: number): Promise<void>;
  /** The stream closed: pushes it claimed may now be claimed by another stream of the session. */
  closeStream(sessionId: string, streamId: string): Promise<void>;
  /**
   * Claims the delivery of one push for `streamId`, so that a push goes on exactly one open
   * stream. False while another stream that is still open holds it; true when unclaimed, when
   * `streamId` holds it already, or when its holder closed or lapsed.
   */
  claimPush(sessionId: string, pushId: string, streamId: string, retentionMs: number): Promise<boolean>;

  /** Marks that `holder` (a replica's stream) has a tasks/result stream open for the task. */
  holdResultStream(taskId: string, holder: string, ttlMs: number): Promise<void>;
  releaseResultStream(taskId: string, holder: string): Promise<void>;
  hasResultStream(taskId: string): Promise<boolean>;

  /**
   * Tells the `onRequestCancel` listeners of every replica, this one's included, that a session
   * cancelled one of its requests. Nothing is kept: a replica that is not listening at that
   * moment never hears of it.
   */
  publishCancel(cancel: RequestCancel): Promise<void>;
  /** Calls `listener` with every cancel published from now on, until the returned function is called. */
  onRequestCancel(listener: (cancel: RequestCancel) => void): () => void;
  /** Resolves once `onRequestCancel` listeners hear the cancels of every replica (Redis SUBSCRIBE takes a round trip). */
  requestCancelsReady(): Promise<void>;

  close(): Promise<void>;
}
