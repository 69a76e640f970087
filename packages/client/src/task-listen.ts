import { isRecord, toTaskSnapshot } from './shapes.js';
import type { McpTransport } from './transport.js';
import type { TaskSnapshot } from './types.js';

export interface TaskListen {
  /** True while the server has acknowledged the task id and the stream is open. */
  readonly active: boolean;
  close(): void;
}

/**
 * `subscriptions/listen` for one task (MCP 2026-07-28, Patterns › Subscriptions; SEP-2663, `notifications/tasks`). Each `notifications/tasks` for it goes to
 * `onTask`. Any failure (refused, not acknowledged, malformed, dropped) just ends the listen:
 * polling is always running underneath, so the caller only hears `onActiveChange` and polls
 * at its normal rate again. There is no reconnect.
 */
export function listenForTask(
  transport: McpTransport,
  taskId: string,
  onTask: (task: TaskSnapshot) => void,
  onActiveChange: () => void,
): TaskListen {
  const controller = new AbortController();
  let active = false;
  let closed = false;

  const run = async (): Promise<void> => {
    const messages = await transport.stream('subscriptions/listen', { notifications: { taskIds: [taskId] } }, controller.signal);
    let acknowledged = false;
    for await (const message of messages) {
      if (closed) return;
      const params = isRecord(message.params) ? message.params : {};
      if (!acknowledged) {
        // The acknowledgement comes first and lists only the ids the server will report.
        const ids = isRecord(params.notifications) ? params.notifications.taskIds : undefined;
        if (message.method !== 'notifications/subscriptions/acknowledged' || !Array.isArray(ids) || !ids.includes(taskId)) return;
        acknowledged = true;
        active = true;
        onActiveChange();
        continue;
      }
      if (message.method === 'notifications/tasks' && params.taskId === taskId) {
        onTask(toTaskSnapshot(params, 'notifications/tasks'));
      }
    }
  };

  run()
    .catch(() => undefined)
    .finally(() => {
      const wasActive = active;
      active = false;
      controller.abort();
      if (wasActive && !closed) onActiveChange();
    });

  return {
    get active() {
      return active;
    },
    close() {
      closed = true;
      active = false;
      controller.abort();
    },
  };
}
