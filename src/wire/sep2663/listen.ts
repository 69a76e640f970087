import type { ServerResponse } from 'node:http';
import type { TaskRecord } from '../../core/task.js';
import type { StreamSlot } from '../../core/limits.js';
import type { OpenStreams } from '../../http/open-streams.js';
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
  /** Where the stream registers its graceful end (shutdown). */
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
 * every change until that id is terminal. Keep-alive comments hold proxies open.
 */
export async function serveListen(res: ServerResponse, options: ListenOptions): Promise<void> {
  const { hub, principal, id, slot } = options;
  let closed = false;
  res.once('close', () => {
    closed = true;
    slot.release();
  });
  const requested = [...new Set(options.taskIds)];
  let found: Array<TaskRecord | undefined>;
  try {
    found = await Promise.all(requested.map((taskId) => hub.snapshot(taskId, principal)));
  } catch (err) {
    // Nothing was sent yet, so the client gets a JSON-RPC error it can act on (a retryable -32603).
    if (!closed) await writeReply(res, options.fail(err));
    options.onClose?.();
    return;
  }
  const snapshots = found.filter((task): task is TaskRecord => task?.principal === principal);

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  const write = (frame: string): void => {
    if (!res.writableEnded) res.write(frame);
  };
  const ack = {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [META.subscriptionId]: id }, notifications: { taskIds: snapshots.map((task) => task.taskId) } },
  };
  const watcher: ListenWatcher = { principal, framePrefix: taskFramePrefix(id), write };
  // One write for the ack and every snapshot: a write is a syscall, and streams open by the thousand.
  let opening = `data: ${JSON.stringify(ack)}\n\n`;
  for (const task of snapshots) opening += taskFrame(watcher.framePrefix, JSON.stringify(renderDetailedTask(task)));
  write(opening);
  // A client gone during the snapshot reads has no close event left to clean up after it.
  if (closed) {
    options.onClose?.();
    return;
  }

  const unwatch = hub.watch(watcher, snapshots);
  const keepAlive = setInterval(() => {
    if (res.writableEnded) return;
    res.write(': keep-alive\n\n');
    slot.renew();
  }, options.keepAliveMs);
  const unregister = options.streams.add(() => endListen(res, id));
  res.once('close', () => {
    clearInterval(keepAlive);
    unwatch();
    unregister();
    options.onClose?.();
  });
}

/** The graceful end of a listen (e.g. at shutdown): the listen result, then close. */
export function endListen(res: ServerResponse, id: JsonRpcId): void {
  if (res.writableEnded) return;
  res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } } })}\n\n`);
}
