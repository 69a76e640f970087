import type { Reply } from '../wire/reply.js';
import type { Recorder, RequestEvent, StreamKind, TaskEvent } from './events.js';
import type { Logger } from './logger.js';

/** Polls: a client repeats them every few seconds for each open task, so they log at `debug` (with forwarded traffic). */
const POLLS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/status']);
/**
 * The task API's actions: with opened sessions and created tasks, what a line at `info` is for.
 * Pings, listings and plain tool calls come by the thousand per second on either wire, so they
 * log at `debug` when they went well: a new client's quick call is written no more than an old
 * client's forwarded one.
 */
const TASK_ACTIONS: ReadonlySet<string> = new Set(['tasks/create', 'tasks/update', 'tasks/cancel', 'tasks/result', 'tasks/list', 'subscriptions/listen']);
/** The methods whose params carry tool arguments (logged only with `logArguments`). */
const CALLS: ReadonlySet<string> = new Set(['tools/call', 'tasks/create']);
/** How a flat SEP-2663 CreateTaskResult begins, as the handler writes it (src/wire/sep2663/render.ts). */
const CREATED_TASK = '"result":{"resultType":"task","taskId":';
const JSON_STRING = /"(?:[^"\\]|\\.)*"/y;

/**
 * The recorder the wires call, which also writes the request log and the task lifecycle lines
 * (docs/operations.md, "Logs"). It listens only: every event goes to the traffic recorder first,
 * unchanged. Whether a line is wanted is decided once, at construction, so that at `info` a poll
 * costs one comparison; a line never carries a token, a header or a result, and carries tool
 * arguments only when `logArguments` asks.
 */
export class LoggingRecorder implements Recorder {
  private readonly info: boolean;
  private readonly debug: boolean;

  constructor(
    private readonly inner: Recorder,
    private readonly logger: Logger,
    private readonly logArguments = false,
  ) {
    this.info = logger.isLevelEnabled('info');
    this.debug = logger.isLevelEnabled('debug');
  }

  record(event: RequestEvent): void {
    this.inner.record(event);
    if (!this.info) return;
    const taskId = taskIdOf(event.params, event.reply);
    const quiet =
      POLLS.has(event.method) ||
      (event.wire === 'passthrough' && event.method !== 'initialize') ||
      (event.outcome === 'ok' && !TASK_ACTIONS.has(event.method) && event.method !== 'initialize' && taskId === undefined);
    if (quiet && !this.debug) return;
    try {
      const params = event.params;
      this.logger[quiet ? 'debug' : 'info'](
        {
          method: event.method,
          wire: event.wire,
          tool: event.tool,
          principal: event.principal,
          clientName: event.clientName,
          clientVersion: event.clientVersion,
          protocolVersion: event.protocolVersion,
          outcome: event.outcome,
          durationMs: Math.round(event.latencyMs * 10) / 10,
          taskId,
          arguments: this.logArguments && CALLS.has(event.method) ? params?.arguments : undefined,
        },
        'request',
      );
    } catch {
      // Logging never fails a request.
    }
  }

  task(event: TaskEvent): void {
    this.inner.task(event);
    // A creation is already the `info` line of the request that created the task, with its id.
    const created = event.kind === 'created';
    if (created ? !this.debug : !this.info) return;
    try {
      this.logger[created ? 'debug' : 'info'](
        {
          taskId: event.taskId,
          wire: event.wire,
          tool: event.tool,
          // From creation to this event; 0 for `created`.
          ageMs: event.at - event.createdAt,
        },
        `task ${event.kind}`,
      );
    } catch {
      // Logging never fails a task.
    }
  }

  streamOpened(kind: StreamKind): () => void {
    return this.inner.streamOpened(kind);
  }

  sessionSeen(sessionId: string): void {
    this.inner.sessionSeen(sessionId);
  }
}

/** The task a request names (`params.taskId`) or creates (the id in the answer), if any. */
function taskIdOf(params: Record<string, unknown> | undefined, reply: Reply | undefined): string | undefined {
  if (typeof params?.taskId === 'string') return params.taskId;
  if (reply?.kind === 'json-text') {
    // `result` follows the id at once (an id holds no bare quote), so a large answer is not read through.
    const at = reply.text.indexOf('"result":{');
    if (at < 0 || !reply.text.startsWith(CREATED_TASK, at)) return undefined;
    JSON_STRING.lastIndex = at + CREATED_TASK.length;
    const match = JSON_STRING.exec(reply.text);
    return match ? (JSON.parse(match[0]) as string) : undefined;
  }
  if (reply?.kind !== 'json') return undefined;
  const result = (reply.body as { result?: { taskId?: unknown; task?: { taskId?: unknown } } } | undefined)?.result;
  const id = result?.task?.taskId ?? result?.taskId;
  return typeof id === 'string' ? id : undefined;
}
