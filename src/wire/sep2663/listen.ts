import type { TaskRecord } from '../../core/task.js';
import type { StreamSlot } from '../../core/limits.js';
import type { Reply, SseOut } from '../reply.js';
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
  /** Its place in the principal's open-stream count, renewed with each keep-alive. */
  slot: StreamSlot;
  /** Called when the stream ends, whoever ended it. */
  onClose?: () => void;
  /** The JSON-RPC answer for a failure before the stream opened (the store did not answer). */
  fail: (err: unknown) => Reply;
}

/**
 * `subscriptions/listen` with `taskIds` (MCP 2026-07-28, Patterns › Subscriptions; SEP-2663, `notifications/tasks`): the acknowledgement first (listing only the ids
 * this principal may see), then one snapshot per accepted id, then a `notifications/tasks` on
 * every change until that id is terminal. The snapshots are read before the stream opens, so
 * that a store that does not answer gets the client a JSON-RPC error it can act on. The HTTP edge
 * drives the stream (keep-alive, shutdown, the byte budget: src/http/sse.ts).
 */
export async function listen(options: ListenOptions): Promise<Reply> {
  const { hub, principal, id, slot } = options;
  const requested = [...new Set(options.taskIds)];
  // Only the records this principal may see are kept: sendSnapshots lets go of them as it goes.
  let snapshots: Array<TaskRecord | string>;
  try {
    const found = await Promise.all(requested.map((taskId) => hub.snapshot(taskId, principal)));
    snapshots = found.filter((task): task is TaskRecord => task !== undefined);
  } catch (err) {
    // Nothing was sent yet, so the client gets a JSON-RPC error it can act on (a retryable -32603).
    slot.release();
    options.onClose?.();
    return options.fail(err);
  }
  let unwatch = (): void => undefined;
  return {
    kind: 'sse',
    stream: {
      slot,
      run: async (out) => {
        const ack = {
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: { [META.subscriptionId]: id }, notifications: { taskIds: snapshots.map((task) => (task as TaskRecord).taskId) } },
        };
        // The ack and the snapshots that fit go out in one write: a write is a syscall, and streams open by the thousand.
        out.cork();
        out.write(`data: ${JSON.stringify(ack)}\n\n`);
        const watcher: ListenWatcher = { principal, framePrefix: taskFramePrefix(id), write: (frame) => void out.write(frame) };
        const sent = await sendSnapshots(out, watcher.framePrefix, snapshots, hub, principal);
        if (sent && !out.closed) unwatch = hub.watch(watcher, sent);
      },
      shutdown: (out) => endListen(out, id),
      closed: () => {
        unwatch();
        options.onClose?.();
      },
    },
  };
}

/**
 * One frame per snapshot, as fast as the client reads them. Once it lags, the records not yet
 * sent are dropped for their ids and read again when their turn comes, so that a client that
 * stops reading makes the replica hold one frame, not one per task. `pending` is emptied in
 * place for that reason. Returns what was sent (for the hub's change detection, without the
 * results), or undefined when the stream closed first.
 */
async function sendSnapshots(
  stream: SseOut,
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
function endListen(stream: SseOut, id: JsonRpcId): void {
  stream.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } } })}\n\n`);
}
