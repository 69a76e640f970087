import { DEFAULT_MAX_POLL_INTERVAL_MS } from './poll-schedule.js';
import { McpRequestError } from './errors.js';
import { NoInputHandlerError } from './input-answers.js';
import { MemoryTaskIdStore } from './memory-task-id-store.js';
import { headerMapFromTools, paramHeaders, type ToolHeaderMap } from './param-headers.js';
import { classifyToolCallResult, InvalidAnswerError, isRecord, toTaskSnapshot } from './shapes.js';
import { driveTask, type DriverDeps } from './task-driver.js';
import { listenForTask } from './task-listen.js';
import { McpTransport } from './transport.js';
import type { CallToolOptions, CallToolResult, SignalOptions, TaskIdStore, TaskInputRequest, TaskSnapshot, TasksClientOptions } from './types.js';

const DEFAULT_CLIENT_INFO = { name: 'mcp-tasks-shim-client', version: '0.1.0' } as const;
const INVALID_PARAMS = -32602;
const HEADER_MISMATCH = -32020;
/** A server that keeps asking cannot hold a call forever. */
const MAX_INPUT_ROUNDS = 32;

/**
 * A client for tools that may answer with a SEP-2663 task, on the stateless MCP 2026-07-28
 * wire. `callTool` hides the difference: a plain result comes back as is, a task is driven
 * to its end (polling or push, input requests, cancellation) and its result comes back.
 */
export class TasksClient {
  private readonly transport: McpTransport;
  private readonly store: TaskIdStore;
  private readonly maxPollIntervalMs: number;
  /** Tool argument → `Mcp-Param-*` header mapping, read from tools/list only when a server asks for one. */
  private toolHeaders: ToolHeaderMap | undefined;

  constructor(private readonly options: TasksClientOptions) {
    if (typeof options.url !== 'string' || options.url === '') throw new TypeError('TasksClient: options.url is required');
    const max = options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS;
    if (!Number.isFinite(max) || max <= 0) throw new RangeError('TasksClient: maxPollIntervalMs must be a positive finite number');
    this.maxPollIntervalMs = max;
    this.store = options.taskStore ?? new MemoryTaskIdStore();
    const fetchImpl = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
    this.transport = new McpTransport({
      url: options.url,
      fetch: fetchImpl,
      headers: options.headers,
      clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
      capabilities: options.capabilities ?? {},
    });
  }

  /** Calls a tool and returns its result, driving a task to its end when the server makes one. */
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<CallToolResult> {
    const started = await this.startTool(name, args, options);
    if (started.kind === 'result') return started.result;
    return driveTask(started.task, this.driverDeps(), options);
  }

  /** One `tools/call` round trip: the plain result, or the new task (saved in the TaskIdStore) without driving it. */
  async startTool(
    name: string,
    args: Record<string, unknown> = {},
    options: CallToolOptions = {},
  ): Promise<{ kind: 'result'; result: CallToolResult } | { kind: 'task'; task: TaskSnapshot }> {
    let params: Record<string, unknown> = { name, arguments: args };
    const send = (): Promise<Record<string, unknown>> =>
      this.transport.request('tools/call', params, { name, headers: paramHeaders(this.toolHeaders, name, args), signal: options.signal });
    for (let round = 1; ; round++) {
      let raw: Record<string, unknown>;
      try {
        raw = await send();
      } catch (err) {
        // A missing Mcp-Param-* header is refused before anything runs (step 4 of the shim's order of checks, docs/architecture.md): learn the schemas once and retry.
        if (!(err instanceof McpRequestError) || err.code !== HEADER_MISMATCH || this.toolHeaders !== undefined) throw err;
        this.toolHeaders = await this.loadToolHeaders();
        if (Object.keys(paramHeaders(this.toolHeaders, name, args)).length === 0) throw err;
        raw = await send();
      }
      const answer = classifyToolCallResult(raw, name);
      if (answer.kind === 'input') {
        // MRTR (MCP 2026-07-28, Patterns › MRTR): the same call again, with the answers and the server's requestState.
        if (round >= MAX_INPUT_ROUNDS) throw new InvalidAnswerError(`tools/call ${name}`, `still asking for input after ${MAX_INPUT_ROUNDS} rounds`);
        const inputResponses = await this.answerBeforeTask(answer.inputRequests, options);
        params = { name, arguments: args, inputResponses, ...(answer.requestState === undefined ? {} : { requestState: answer.requestState }) };
        continue;
      }
      if (answer.kind === 'task') {
        await this.store.save({ taskId: answer.task.taskId, tool: name, createdAt: answer.task.createdAt });
        options.onTaskCreated?.(answer.task);
      }
      return answer;
    }
  }

  /** Drives an existing task (for instance one found in the TaskIdStore) to its end. */
  async waitForTask(taskId: string, options: CallToolOptions = {}): Promise<CallToolResult> {
    return driveTask(await this.getTask(taskId), this.driverDeps(), options);
  }

  /** `tasks/get`. An unknown or expired task (-32602) is also dropped from the TaskIdStore. Aborting `signal` abandons the request. */
  async getTask(taskId: string, options: SignalOptions = {}): Promise<TaskSnapshot> {
    const raw = await this.forgetIfUnknown(taskId, this.transport.request('tasks/get', { taskId }, { name: taskId, signal: options.signal }));
    return toTaskSnapshot(raw, 'tasks/get');
  }

  /** `tasks/update`: answers by input key. The server ignores keys that are not outstanding. */
  async updateTask(taskId: string, inputResponses: Record<string, unknown>): Promise<void> {
    await this.transport.request('tasks/update', { taskId, inputResponses }, { name: taskId });
  }

  /** `tasks/cancel`: an acknowledgement of intent only; the outcome shows in `getTask`. Aborting `signal` abandons the request. */
  async cancelTask(taskId: string, options: SignalOptions = {}): Promise<void> {
    await this.forgetIfUnknown(taskId, this.transport.request('tasks/cancel', { taskId }, { name: taskId, signal: options.signal }));
  }

  /** After a restart: drives every task in the TaskIdStore, each to its own outcome. */
  async resumeAll(options: CallToolOptions = {}): Promise<Array<{ taskId: string; outcome: PromiseSettledResult<CallToolResult> }>> {
    const entries = await this.store.list();
    const outcomes = await Promise.allSettled(entries.map((entry) => this.waitForTask(entry.taskId, options)));
    return entries.map((entry, index) => ({ taskId: entry.taskId, outcome: outcomes[index]! }));
  }

  /** `server/discover`: versions, capabilities (look for `extensions["io.modelcontextprotocol/tasks"]`), instructions. */
  async discover(): Promise<Record<string, unknown>> {
    return this.transport.request('server/discover', {});
  }

  private driverDeps(): DriverDeps {
    return {
      getTask: (taskId) => this.getTask(taskId),
      updateTask: (taskId, responses) => this.updateTask(taskId, responses),
      cancelTask: (taskId) => this.cancelTask(taskId),
      forget: (taskId) => this.store.remove(taskId),
      listen: this.options.listen ? (taskId, onTask, onActiveChange) => listenForTask(this.transport, taskId, onTask, onActiveChange) : undefined,
      maxPollIntervalMs: this.maxPollIntervalMs,
      onInputRequest: this.options.onInputRequest,
    };
  }

  /** The answers to the input a call asks before it answers or becomes a task, all at once. */
  private async answerBeforeTask(requests: Record<string, TaskInputRequest>, options: CallToolOptions): Promise<Record<string, unknown>> {
    const handler = options.onInputRequest ?? this.options.onInputRequest;
    const entries = Object.entries(requests);
    const answers = await Promise.all(
      entries.map(([key, { method, params }]) => {
        if (!handler) throw new NoInputHandlerError(undefined, key, method, params);
        return handler({ key, method, params }, undefined);
      }),
    );
    return Object.fromEntries(entries.map(([key], i) => [key, answers[i]]));
  }

  private async forgetIfUnknown<T>(taskId: string, request: Promise<T>): Promise<T> {
    try {
      return await request;
    } catch (err) {
      if (err instanceof McpRequestError && err.code === INVALID_PARAMS) await this.store.remove(taskId);
      throw err;
    }
  }

  private async loadToolHeaders(): Promise<ToolHeaderMap> {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    // Bounded: a server that never stops paging cannot hold the call forever.
    for (let page = 0; page < 50; page++) {
      const result = await this.transport.request('tools/list', cursor === undefined ? {} : { cursor });
      if (Array.isArray(result.tools)) tools.push(...result.tools);
      cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return headerMapFromTools(tools.filter(isRecord));
  }
}
