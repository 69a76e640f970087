import { changeFanOut } from '../../core/change-fan-out.js';
import { isTerminal, type TaskRecord, type TaskStatus } from '../../core/task.js';
import type { TaskFeed } from '../../core/task-change.js';
import type { SessionRecord, SessionStore } from '../../session/session-store.js';
import { pushId, RELATED_TASK } from './constants.js';
import { renderMcpTask } from './render.js';
import type { SessionStream } from './session-stream.js';

export type FeedScope = { kind: 'get' } | { kind: 'result'; taskId: string };

export interface PushFeedOptions {
  tasks: TaskFeed;
  sessions: SessionStore;
  session: SessionRecord;
  stream: SessionStream;
  scope: FeedScope;
  /** `notifications/tasks/status` speaks 2025-11-25 statuses; a tasks/create session does not get them. */
  statusNotifications: boolean;
  /** How long a push claim is kept: the longest a task can live. */
  retentionMs: number;
  /** A result stream ends when its task does. */
  onTerminal?: (task: TaskRecord) => void;
}

/**
 * Delivers a legacy session's task messages on one stream. The task record is the queue: its
 * outstanding `inputRequests` are the pushes still owed, so a stream that opens anywhere, at
 * any time, sends what is owed and then follows changes. A GET stream leaves a task alone while
 * a tasks/result stream for it is open somewhere, and each push is claimed by one open stream of
 * the session before it is written, so each message goes on exactly one stream. Every feed of the
 * process follows changes through one shared subscription (`changeFanOut`), keyed by its session
 * (GET) or its task (tasks/result).
 */
export class PushFeed {
  private readonly sent = new Set<string>();
  private readonly lastStatus = new Map<string, TaskStatus>();
  private readonly chains = new Map<string, Promise<void>>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: PushFeedOptions) {}

  async start(): Promise<void> {
    const { tasks, sessions, session, scope } = this.options;
    const changes = changeFanOut(tasks);
    const onChange = (change: { taskId: string }): void => void this.refresh(change.taskId, false);
    this.unsubscribe = scope.kind === 'result' ? changes.onTask(scope.taskId, onChange) : changes.onSession(session.sessionId, onChange);
    const initial = scope.kind === 'result' ? [scope.taskId] : await sessions.watchedTasks(session.sessionId);
    await Promise.all(initial.map((taskId) => this.refresh(taskId, true)));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Per task, one refresh at a time: two change events must not push the same key twice. */
  private refresh(taskId: string, initial: boolean): Promise<void> {
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() => this.deliver(taskId, initial)).catch(() => undefined);
    this.chains.set(taskId, next);
    void next.then(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
    return next;
  }

  private async deliver(taskId: string, initial: boolean): Promise<void> {
    const { tasks, sessions, session, stream, scope } = this.options;
    if (stream.closed || !this.unsubscribe) return;
    const task = await tasks.findTask(session.principal, taskId);
    if (!task) return;
    if (scope.kind === 'get' && (await sessions.hasResultStream(taskId))) return;

    const previous = this.lastStatus.get(taskId);
    this.lastStatus.set(taskId, task.status);
    if (!initial && previous !== task.status && this.options.statusNotifications) {
      await stream.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: renderMcpTask(task) });
    }
    if (task.status === 'input_required') {
      for (const [key, request] of Object.entries(task.inputRequests)) {
        const id = pushId(taskId, key);
        if (this.sent.has(id)) continue;
        // Another open stream of the session delivered it already; if that one closes, the next
        // stream to open (or the next change) delivers it again.
        if (!(await sessions.claimPush(session.sessionId, id, stream.streamId, this.options.retentionMs))) continue;
        this.sent.add(id);
        const params: Record<string, unknown> = { ...request.params, _meta: { [RELATED_TASK]: { taskId } } };
        // URL-mode elicitation on this wire needs an elicitationId; the input key is unique for the task's life.
        if (request.method === 'elicitation/create' && request.params.mode === 'url') params.elicitationId = key;
        await stream.send({ jsonrpc: '2.0', id, method: request.method, params });
      }
    }
    if (isTerminal(task.status)) this.options.onTerminal?.(task);
  }
}
