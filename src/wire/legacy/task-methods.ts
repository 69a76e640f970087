import { z } from 'zod';
import { TaskIdParams } from '../task-id.js';
import { InvalidParamsError, MethodNotFoundError } from '../../core/errors.js';
import { isTerminal, type TaskRecord, type Wire } from '../../core/task.js';
import type { CallContext } from '../../core/call.js';
import type { SessionRecord } from '../../session/session-store.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { LegacyDeps } from './deps.js';
import { renderDialectTask, renderMcpTask } from './render.js';

const PAGE_SIZE = 100;

const ToolsCallWithTask = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.looseObject({ ttl: z.number().int().positive().optional() }),
});
const TasksCreate = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  ttl: z.number().int().positive().optional(),
});
const ListParams = z.looseObject({ cursor: z.string().optional() });

export function parseParams<S extends z.ZodType>(schema: S, params: Record<string, unknown> | undefined): z.infer<S> {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) {
    throw new InvalidParamsError(`Invalid params: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/**
 * The task methods of both legacy wires, over the shared core. Rendering follows the wire the
 * request is on; creation follows each wire's own gating rules (not SEP-2663's auto window).
 */
export class LegacyTaskMethods {
  constructor(private readonly deps: LegacyDeps) {}

  ctx(session: SessionRecord, wire: Wire): CallContext {
    return {
      principal: session.principal,
      wire,
      sessionId: session.sessionId,
      clientCapabilities: session.clientCapabilities,
      clientInfo: session.clientInfo,
    };
  }

  /** Task-augmented `tools/call` (MCP 2025-11-25, Utilities › Tasks): the nested CreateTaskResult. */
  async toolsCallAsTask(session: SessionRecord, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const call = parseParams(ToolsCallWithTask, params);
    // As tasks/create: a tool the upstream does not list gets no task that could only fail.
    if (!(await this.deps.service.toolInfo(call.name))) throw new InvalidParamsError(`Unknown tool: ${call.name}`);
    const policy = await this.deps.service.policyFor(call.name);
    if (policy.mode === 'forbidden') throw new MethodNotFoundError('tools/call', `tool '${call.name}' does not support task-augmented execution`);
    const task = await this.create(session, 'mcp-2025-11-25', call.name, call.arguments ?? {}, call.task.ttl);
    return { task: renderMcpTask(task) };
  }

  /** `tasks/create` (dialect). */
  async tasksCreate(session: SessionRecord, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const call = parseParams(TasksCreate, params);
    const tool = await this.deps.service.toolInfo(call.name);
    if (!tool) throw new InvalidParamsError(`Unknown tool: ${call.name}`);
    const policy = await this.deps.service.policyFor(call.name);
    if (policy.mode === 'forbidden') throw new InvalidParamsError(`Tool '${call.name}' does not run as a task: call it with tools/call`);
    const task = await this.create(session, 'tasks-create', call.name, call.arguments ?? {}, call.ttl);
    return renderDialectTask(task);
  }

  async tasksGet(session: SessionRecord, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const { taskId } = parseParams(TaskIdParams, params);
    return renderMcpTask(await this.touch(session, taskId));
  }

  async tasksStatus(session: SessionRecord, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const { taskId } = parseParams(TaskIdParams, params);
    return renderDialectTask(await this.touch(session, taskId));
  }

  /**
   * 2025-11-25: the task must be `cancelled` before we answer, and a terminal one is -32602. A task
   * an upstream task backs ends when the upstream answers the cancel (bounded by the cancel
   * grace), so the answer waits for that end; if the upstream's task ended otherwise first, the
   * cancel came too late: -32602 naming that status.
   * Dialect: the task as recorded after the request (it may still read `running`: cancellation is
   * cooperative); a terminal one comes back as it is.
   */
  async tasksCancel(session: SessionRecord, params: Record<string, unknown> | undefined, dialect: boolean): Promise<Record<string, unknown>> {
    const { taskId } = parseParams(TaskIdParams, params);
    await this.touch(session, taskId);
    const outcome = await this.deps.service.cancelTask(session.principal, taskId);
    if (dialect) return renderDialectTask(outcome.task);
    if (isTerminal(outcome.task.status)) {
      if (!outcome.changed) throw terminalAlready(outcome.task);
      return renderMcpTask(outcome.task);
    }
    const ended = await this.deps.service.cancelledTask(session.principal, taskId);
    if (ended.status !== 'cancelled') throw terminalAlready(ended);
    return renderMcpTask(ended);
  }

  /** The tasks of the caller's session (`session`), newest first, 100 a page; expired ones drop out. */
  async tasksList(session: SessionRecord, params: Record<string, unknown> | undefined, dialect: boolean): Promise<Record<string, unknown>> {
    const { cursor } = parseParams(ListParams, params);
    let after = cursor === undefined ? undefined : decodeCursor(session.sessionId, cursor);
    const live: TaskRecord[] = [];
    // Index entries outlive their tasks; skipping expired ones may take more than one read.
    for (;;) {
      const entries = await this.deps.sessions.listTasks(session.sessionId, after, PAGE_SIZE + 1);
      live.push(...(await this.deps.service.getTasks(session.principal, entries.map((e) => e.taskId))));
      if (entries.length < PAGE_SIZE + 1 || live.length > PAGE_SIZE) break;
      after = entries.at(-1);
    }
    const page = live.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    const render = dialect ? renderDialectTask : renderMcpTask;
    return {
      tasks: page.map(render),
      ...(live.length > PAGE_SIZE && last ? { nextCursor: encodeCursor(session.sessionId, { taskId: last.taskId, createdAt: last.createdAt }) } : {}),
    };
  }

  /** Reads the task for this principal and makes the caller's session the one its pushes go to. */
  async touch(session: SessionRecord, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.service.touchTask(session.principal, taskId, session.sessionId);
    if (!isTerminal(task.status)) await this.deps.sessions.watchTask(session.sessionId, taskId, this.deps.retentionMs);
    return task;
  }

  private async create(session: SessionRecord, wire: Wire, name: string, args: Record<string, unknown>, ttl: number | undefined): Promise<TaskRecord> {
    const task = await this.deps.service.createTask(this.ctx(session, wire), { name, arguments: args, optedIn: true, requestedTtlMs: ttl });
    await Promise.all([
      this.deps.sessions.addTask(session.sessionId, { taskId: task.taskId, createdAt: task.createdAt }, this.deps.retentionMs),
      this.deps.sessions.watchTask(session.sessionId, task.taskId, this.deps.retentionMs),
    ]);
    return task;
  }
}

function terminalAlready(task: TaskRecord): InvalidParamsError {
  return new InvalidParamsError(`Cannot cancel task: already in terminal status '${renderMcpTask(task).status as string}'`);
}
