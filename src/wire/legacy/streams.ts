import { randomBytes } from 'node:crypto';
import type { StreamSlot } from '../../core/limits.js';
import type { TaskRecord } from '../../core/task.js';
import type { SessionRecord, StreamEvent } from '../../session/session-store.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import type { SseOut, SseStream } from '../reply.js';
import type { LegacyDeps } from './deps.js';
import { PushFeed } from './push-feed.js';
import { renderTaskResult } from './render.js';
import { SessionStream } from './session-stream.js';

/** How long a stream's marks live without renewal: a replica that died releases them this way. */
const HOLD_MS = 30_000;

/** Runs `cleanup` once the stream closes, or at once if it has closed already. */
function whenClosed(out: SseOut, cleanup: () => void): void {
  if (out.closed) cleanup();
  else out.onClose(cleanup);
}

/** Keeps the stream marked open in the shared store while it is, and unmarks it when it closes. */
function markOpen(deps: LegacyDeps, session: SessionRecord, stream: SessionStream, out: SseOut): void {
  const renew = (): void => {
    void deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS).catch(() => undefined);
  };
  const timer = setInterval(renew, HOLD_MS / 3);
  whenClosed(out, () => {
    clearInterval(timer);
    void deps.sessions.closeStream(session.sessionId, stream.streamId).catch(() => undefined);
  });
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
 * A legacy session's stream as the HTTP edge drives it (src/http/sse.ts: keep-alive, slot,
 * budget). A shutdown ends it cleanly, after what is queued on it: the client resumes it with
 * `Last-Event-ID` on another replica, from the shared log.
 */
function sessionStream(deps: LegacyDeps, session: SessionRecord, slot: StreamSlot, streamId: string, run: (stream: SessionStream, out: SseOut) => Promise<void>): SseStream {
  let stream: SessionStream | undefined;
  return {
    slot,
    run: (out) => {
      stream = new SessionStream(out, deps.sessions, session.sessionId, streamId);
      return run(stream, out);
    },
    shutdown: () => void stream?.end(),
  };
}

/**
 * The standalone GET stream: the shim's pushes for the client session's tasks, and the upstream's own
 * GET stream of its upstream session, merged under the shim's event ids.
 */
export function getStream(deps: LegacyDeps, session: SessionRecord, slot: StreamSlot, resume?: Resumption): SseStream {
  return sessionStream(deps, session, slot, resume?.streamId ?? newStreamId('g'), async (stream, out) => {
    await stream.open(resume ? undefined : { kind: 'get' }, deps.retentionMs);
    if (resume) await stream.replay(resume.events);
    if (stream.closed) return;
    await deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS);
    markOpen(deps, session, stream, out);
    const feed = new PushFeed({
      tasks: deps.service,
      sessions: deps.sessions,
      session,
      stream,
      scope: { kind: 'get' },
      statusNotifications: !session.usesTasksCreate,
      retentionMs: deps.retentionMs,
    });
    // The upstream's own messages for the client's session, under the shim's event ids.
    const stopRelay = session.upstreamSessionId ? deps.upstream.openStream(session.upstreamSessionId, (message) => stream.send(message)) : undefined;
    whenClosed(out, () => {
      feed.stop();
      stopRelay?.();
    });
    await feed.start();
  });
}

/**
 * `tasks/result` (MCP 2025-11-25, Utilities › Tasks; our rule: always SSE): the task's side-channel requests and
 * status notifications travel here while it runs; the original result or error ends it.
 */
export function resultStream(
  deps: LegacyDeps,
  session: SessionRecord,
  taskId: string,
  requestId: JsonRpcId,
  slot: StreamSlot,
  resume?: Resumption,
): SseStream {
  return sessionStream(deps, session, slot, resume?.streamId ?? newStreamId('r'), async (stream, out) => {
    await stream.open(resume ? undefined : { kind: 'result', taskId, requestId: requestId as string | number }, deps.retentionMs);
    if (resume) await stream.replay(resume.events);
    if (stream.closed) return;
    await Promise.all([
      deps.sessions.holdResultStream(taskId, stream.streamId, HOLD_MS),
      deps.sessions.keepStreamOpen(session.sessionId, stream.streamId, HOLD_MS),
    ]);
    markOpen(deps, session, stream, out);
    const renew = setInterval(() => {
      void deps.sessions.holdResultStream(taskId, stream.streamId, HOLD_MS).catch(() => undefined);
    }, HOLD_MS / 3);
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
    whenClosed(out, cleanup);
    await feed.start();
  });
}
