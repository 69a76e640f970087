import type { ServerResponse } from 'node:http';
import type { TaskRecord } from '../../core/task.js';
import type { StreamSlot } from '../../core/limits.js';
import type { OpenStreams } from '../../http/open-streams.js';
import type { BudgetedStream } from '../../http/stream-budget.js';
import { writeReply } from '../../http/write-reply.js';
import type { Reply } from '../reply.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { META } from './constants.js';
import { taskFrame, taskFramePrefix } from './listen-frame.js';
import type { ListenHub, ListenWatcher } from './listen-hub.js';
import { renderDetailedTask } from './render.js';

export interface ListenOptions {
  /** The process's listen streams share its reads and its store subscription. */
  hub: ListenHub;
  principal: string;
  id: JsonRpcId;
  taskIds: string[];
  keepAliveMs: number;
  /** Where the stream registers its graceful end (shutdown), and the bytes it may leave unsent. */
  streams: OpenStreams;
  /** Its place in the principal's open-stream count, renewed with each keep-alive. */
  slot: StreamSlot;
  /** Called when the stream ends, whoever ended it. */
  onClose?: () => void;
  /** The JSON-RPC answer for a failure before the stream opened (the store did not answer). */
  fail: (err: unknown) => Reply;
}

/**
 * `subscriptions/listen` with `taskIds` (§17): the acknowledgement first (listing only the ids
 * this principal may see), then one snapshot per accepted id, then a `notifications/tasks` on
 * every change until that id is terminal. Keep-alive comments hold proxies open. Every frame
 * goes through the replica's stream budget (src/http/stream-budget.ts).
 */
export async function serveListen(res: ServerResponse, options: ListenOptions): Promise<void> {
  const { hub, principal, id, slot } = options;
  let closed = false;
  res.once('close', () => {
    closed = true;
    slot.release();
  });
  const requested = [...new Set(options.taskIds)];
  // Only the records this principal may see are kept: sendSnapshots lets go of them as it goes.
  let snapshots: Array<TaskRecord | string>;
  try {
    const found = await Promise.all(requested.map((taskId) => hub.snapshot(taskId, principal)));
    snapshots = found.filter((task): task is TaskRecord => task !== undefined);
  } catch (err) {
    // Nothing was sent yet, so the client gets a JSON-RPC error it can act on (a retryable -32603).
    if (!closed) await writeReply(res, options.fail(err));
    options.onClose?.();
    return;
  }

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  const stream = options.streams.budget.track(res);
  const ack = {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [META.subscriptionId]: id }, notifications: { taskIds: snapshots.map((task) => (task as TaskRecord).taskId) } },
  };
  // The ack and the snapshots that fit go out in one write: a write is a syscall, and streams open by the thousand.
  stream.cork();
  stream.write(`data: ${JSON.stringify(ack)}\n\n`);
  // A client gone during the snapshot reads has no close event left to clean up after it.
  if (closed) {
    options.onClose?.();
    return;
  }

  const watcher: ListenWatcher = { principal, framePrefix: taskFramePrefix(id), write: (frame) => void stream.write(frame) };
  let unwatch = (): void => undefined;
  const keepAlive = setInterval(() => {
    if (stream.keepAlive()) slot.renew();
  }, options.keepAliveMs);
  const unregister = options.streams.add(() => endListen(stream, id));
  res.once('close', () => {
    clearInterval(keepAlive);
    unwatch();
    unregister();
    options.onClose?.();
  });
  const sent = await sendSnapshots(stream, watcher.framePrefix, snapshots, hub, principal);
  if (sent && !stream.closed) unwatch = hub.watch(watcher, sent);
}

/**
 * One frame per snapshot, as fast as the client reads them. Once it lags, the records not yet
 * sent are dropped for their ids and read again when their turn comes, so that a client that
 * stops reading makes the replica hold one frame, not one per task. `pending` is emptied in
 * place for that reason. Returns what was sent (for the hub's change detection, without the
 * results), or undefined when the stream closed first.
 */
async function sendSnapshots(
  stream: BudgetedStream,
  prefix: string,
  pending: Array<TaskRecord | string>,
  hub: ListenHub,
  principal: string,
): Promise<TaskRecord[] | undefined> {
  const sent: TaskRecord[] = [];
  try {
    for (let i = 0; i < pending.length; i++) {
      const next = pending[i];
      pending[i] = '';
      const task = typeof next === 'string' ? await hub.snapshot(next, principal) : next;
      // Expired while the client lagged: no later change can arrive for it either.
      if (task?.principal !== principal) continue;
      if (!stream.write(taskFrame(prefix, JSON.stringify(renderDetailedTask(task))))) return undefined;
      const { result: _result, error: _error, ...state } = task;
      sent.push(state);
      if (!stream.behind) continue;
      for (let j = i + 1; j < pending.length; j++) {
        const later = pending[j];
        if (later !== undefined && typeof later !== 'string') pending[j] = later.taskId;
      }
      stream.uncork();
      if (!(await stream.drained())) return undefined;
      stream.cork();
    }
  } catch {
    // A store read failed mid-stream: the client listens again rather than miss a snapshot.
    stream.cut();
    return undefined;
  } finally {
    stream.uncork();
  }
  return sent;
}

/** The graceful end of a listen (e.g. at shutdown): the listen result, then close. */
export function endListen(stream: BudgetedStream, id: JsonRpcId): void {
  stream.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } } })}\n\n`);
}
