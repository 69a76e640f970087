import type { ServerResponse } from 'node:http';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { StreamSlot } from '../../core/limits.js';
import type { TaskService } from '../../core/task-service.js';
import type { OpenStreams } from '../../http/open-streams.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { META } from './constants.js';
import { renderDetailedTask } from './render.js';

export interface ListenOptions {
  service: TaskService;
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
}

/**
 * `subscriptions/listen` with `taskIds` (§17): the acknowledgement first (listing only the ids
 * this principal may see), then one snapshot per accepted id, then a `notifications/tasks` on
 * every change until that id is terminal. Keep-alive comments hold proxies open.
 */
export async function serveListen(res: ServerResponse, options: ListenOptions): Promise<void> {
  const { service, principal, id, slot } = options;
  res.once('close', () => slot.release());
  const subscriptionMeta = { [META.subscriptionId]: id };
  const requested = [...new Set(options.taskIds)];
  const found = await Promise.all(requested.map((taskId) => service.store.get(taskId, principal)));
  const snapshots = found.filter((task) => task !== undefined);
  const accepted = snapshots.map((task) => task.taskId);

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  const send = (message: Record<string, unknown>): void => {
    if (!res.writableEnded) res.write(`data: ${JSON.stringify(message)}\n\n`);
  };
  send({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: subscriptionMeta, notifications: { taskIds: accepted } },
  });

  const open = new Set(accepted);
  // What was last sent per id, so a change event that finds nothing new sends nothing.
  const lastSent = new Map<string, string>();
  const signature = (task: TaskRecord): string => `${task.lastUpdatedAt}:${task.status}:${task.statusMessage ?? ''}:${Object.keys(task.inputRequests).join(',')}`;
  const notify = async (taskId: string): Promise<void> => {
    const task = await service.store.get(taskId, principal).catch(() => undefined);
    if (!task || !open.has(taskId)) return;
    if (lastSent.get(taskId) === signature(task)) return;
    lastSent.set(taskId, signature(task));
    if (isTerminal(task.status)) open.delete(taskId);
    send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { _meta: subscriptionMeta, ...renderDetailedTask(task) } });
  };

  const unsubscribe = service.store.subscribe((change) => {
    if (open.has(change.taskId)) void notify(change.taskId);
  });
  for (const task of snapshots) {
    lastSent.set(task.taskId, signature(task));
    if (isTerminal(task.status)) open.delete(task.taskId);
    send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { _meta: subscriptionMeta, ...renderDetailedTask(task) } });
  }
  // A change between the first read and the subscription is caught by one more read.
  for (const taskId of open) void notify(taskId);

  const keepAlive = setInterval(() => {
    if (res.writableEnded) return;
    res.write(': keep-alive\n\n');
    slot.renew();
  }, options.keepAliveMs);
  const unregister = options.streams.add(() => endListen(res, id));
  const end = (): void => {
    clearInterval(keepAlive);
    unsubscribe();
    unregister();
    options.onClose?.();
  };
  res.on('close', end);
}

/** The graceful end of a listen (e.g. at shutdown): the listen result, then close. */
export function endListen(res: ServerResponse, id: JsonRpcId): void {
  if (res.writableEnded) return;
  res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } } })}\n\n`);
}
