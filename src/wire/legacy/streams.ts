import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { StreamSlot } from '../../core/limits.js';
import type { TaskRecord } from '../../core/task.js';
import type { SessionRecord, StreamEvent } from '../../session/session-store.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import type { LegacyDeps } from './deps.js';
import { PushFeed } from './push-feed.js';
import { renderTaskResult } from './render.js';
import { SessionStream } from './session-stream.js';
import { relayUpstreamStream } from './upstream-relay.js';

/** How long a stream's marks live without renewal: a replica that died releases them this way. */
const HOLD_MS = 30_000;

/** Keeps the stream marked open in the shared store while it is, and unmarks it when it closes. */
function markOpen(deps: LegacyDeps, session: SessionRecord, stream: SessionStream, res: ServerResponse): void {
  const renew = (): void => {
    void deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS).catch(() => undefined);
  };
  const timer = setInterval(renew, HOLD_MS / 3);
  res.once('close', () => {
    clearInterval(timer);
    void deps.sessions.closeStream(session.sessionId, stream.streamId).catch(() => undefined);
  });
}

/**
 * A shutdown ends the stream cleanly, after what is queued on it: the client resumes it with
 * `Last-Event-ID` on another replica, from the shared log.
 */
function endOnShutdown(deps: LegacyDeps, stream: SessionStream, res: ServerResponse): void {
  const unregister = deps.streams.add(() => void stream.end());
  res.once('close', unregister);
}

/**
 * Keep-alive comments from the moment the headers are out, so that a client that stops reading
 * during a replay is noticed too (src/http/stream-budget.ts); each tick renews the stream's slot.
 */
function keepAlive(deps: LegacyDeps, stream: SessionStream, res: ServerResponse, slot: StreamSlot): void {
  const timer = setInterval(() => {
    if (stream.keepAlive()) slot.renew();
  }, deps.keepAliveMs);
  res.once('close', () => clearInterval(timer));
}

/** A stream resumed with `Last-Event-ID`: its id and the logged events the client missed. */
export interface Resumption {
  streamId: string;
  events: readonly StreamEvent[];
}

function newStreamId(prefix: 'g' | 'r'): string {
  // Stream ids end up inside event ids `<streamId>_<seq>`: no underscore here.
  return `${prefix}${randomBytes(9).toString('hex')}`;
}

/**
 * The standalone GET stream: the shim's pushes for this session's tasks, and the upstream's own
 * GET stream for this session, merged under the shim's event ids.
 */
export async function serveGetStream(
  deps: LegacyDeps,
  session: SessionRecord,
  res: ServerResponse,
  slot: StreamSlot,
  resume?: Resumption,
): Promise<void> {
  res.once('close', () => slot.release());
  const stream = new SessionStream(res, deps.streams.budget, deps.sessions, session.sessionId, resume?.streamId ?? newStreamId('g'));
  await stream.open(resume ? undefined : { kind: 'get' }, deps.retentionMs);
  keepAlive(deps, stream, res, slot);
  if (resume) await stream.replay(resume.events);
  if (stream.closed) return;
  await deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS);
  markOpen(deps, session, stream, res);
  const feed = new PushFeed({
    tasks: deps.service,
    sessions: deps.sessions,
    session,
    stream,
    scope: { kind: 'get' },
    statusNotifications: !session.usesTasksCreate,
    retentionMs: deps.retentionMs,
  });
  const stopRelay = relayUpstreamStream(deps, session.upstreamSessionId, stream);
  endOnShutdown(deps, stream, res);
  res.once('close', () => {
    feed.stop();
    stopRelay();
  });
  await feed.start();
}

/**
 * `tasks/result` (2025-11-25 §6, our rule: always SSE): the task's side-channel requests and
 * status notifications travel here while it runs; the original result or error ends it.
 */
export async function serveResultStream(
  deps: LegacyDeps,
  session: SessionRecord,
  res: ServerResponse,
  taskId: string,
  requestId: JsonRpcId,
  slot: StreamSlot,
  resume?: Resumption,
): Promise<void> {
  res.once('close', () => slot.release());
  const stream = new SessionStream(res, deps.streams.budget, deps.sessions, session.sessionId, resume?.streamId ?? newStreamId('r'));
  await stream.open(resume ? undefined : { kind: 'result', taskId, requestId: requestId as string | number }, deps.retentionMs);
  keepAlive(deps, stream, res, slot);
  if (resume) await stream.replay(resume.events);
  if (stream.closed) return;
  await Promise.all([
    deps.sessions.holdResultStream(taskId, stream.streamId, HOLD_MS),
    deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS),
  ]);
  markOpen(deps, session, stream, res);
  const renew = setInterval(() => {
    void deps.sessions.holdResultStream(taskId, stream.streamId, HOLD_MS).catch(() => undefined);
  }, HOLD_MS / 3);
  endOnShutdown(deps, stream, res);
  let finished = false;
  const cleanup = (): void => {
    clearInterval(renew);
    feed.stop();
    void deps.sessions.releaseResultStream(taskId, stream.streamId).catch(() => undefined);
  };
  const onTerminal = (task: TaskRecord): void => {
    if (finished) return;
    finished = true;
    const answer = renderTaskResult(task);
    void stream
      .send({ jsonrpc: '2.0', id: requestId, ...answer })
      .then(() => stream.end())
      .finally(cleanup);
  };
  const feed = new PushFeed({
    tasks: deps.service,
    sessions: deps.sessions,
    session,
    stream,
    scope: { kind: 'result', taskId },
    statusNotifications: !session.usesTasksCreate,
    retentionMs: deps.retentionMs,
    onTerminal,
  });
  res.once('close', cleanup);
  await feed.start();
}
