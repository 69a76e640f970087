import type { z } from 'zod';
import {
  ErrorCode,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  MissingCapabilityError,
  ShimError,
  UnsupportedVersionError,
  UpstreamRpcError,
} from '../../core/errors.js';
import type { ToolCatalog } from '../../core/ports.js';
import type { CallContext } from '../../core/call.js';
import type { TaskService } from '../../core/task-service.js';
import { TRANSLATED, type TranslatedRoute } from '../translated-methods.js';
import { classify, errorResponse, idOf, resultResponse, type JsonRpcId, type JsonRpcRequest } from '../jsonrpc/message.js';
import { json, type Reply, type StreamAdmission } from '../reply.js';
import type { WireAdapter, WireRequest } from '../request.js';
import { DISCOVER_VERSIONS, META, SUPPORTED_VERSIONS, TASKS_CAPABILITY, TASKS_EXTENSION } from './constants.js';
import { checkHeaders, checkParamHeaders } from './headers.js';
import { ListenHub } from './listen-hub.js';
import { listen } from './listen.js';
import { createTaskMembers, renderDetailedTask } from './render.js';
import { TaskIdParams } from '../task-id.js';
import { ListenParams, plainTaskId, plainToolsCall, readMeta, TasksUpdateParams, ToolsCallParams } from './schemas.js';
import { httpStatusFor } from './status.js';

export interface UpstreamRequester {
  listTools(): Promise<Array<Record<string, unknown>>>;
  /** The upstream's server capabilities (from its initialize result). */
  capabilities(): Promise<Record<string, unknown>>;
  request<S extends z.ZodType>(method: string, params: Record<string, unknown> | undefined, schema: S, signal?: AbortSignal): Promise<z.infer<S>>;
}

export interface Sep2663Options {
  service: TaskService;
  catalog: ToolCatalog;
  upstream: UpstreamRequester;
  serverInfo: { name: string; version: string };
  instructions?: string;
  maxListenTaskIds: number;
  /** Refuses a listen while the replica holds too many unsent stream bytes. */
  streams: StreamAdmission;
  /** Cache hints on discover and list results (`ttlMs`, `cacheScope`). */
  cacheTtlMs?: number;
}

interface Call {
  id: JsonRpcId;
  request: JsonRpcRequest;
  params: Record<string, unknown>;
  ctx: CallContext;
  headers: WireRequest['headers'];
  signal: () => AbortSignal;
}

type MethodHandler = (call: Call) => Promise<Record<string, unknown> | StreamAnswer | TextAnswer>;

/**
 * The SEP-2663 adapter on the 2026-07-28 stateless wire: validates each POST in the order of
 * docs/architecture.md, "Order of checks on the 2026-07-28 wire", calls the task core, and renders its answers in this wire's shapes.
 */
export class Sep2663Handler implements WireAdapter {
  private readonly methods: ReadonlyMap<string, MethodHandler>;
  private readonly listenHub: ListenHub;
  /** The `_meta` member every result ends with, serialised once. */
  private readonly serverInfoMember: string;

  constructor(private readonly options: Sep2663Options) {
    this.listenHub = new ListenHub(options.service);
    this.serverInfoMember = `"_meta":${JSON.stringify({ [META.serverInfo]: options.serverInfo })}`;
    this.methods = new Map<string, MethodHandler>([
      ['server/discover', () => this.discover()],
      ['ping', async () => ({})],
      ['tools/list', async () => this.toolsList()],
      ['tools/call', (call) => this.toolsCall(call)],
      ['tasks/get', (call) => this.tasksGet(call)],
      ['tasks/update', (call) => this.tasksUpdate(call)],
      ['tasks/cancel', (call) => this.tasksCancel(call)],
      ['subscriptions/listen', (call) => this.listen(call)],
      ...[...TRANSLATED].map(([method, route]): [string, MethodHandler] => [method, (call) => this.translate(method, route, call)]),
    ]);
  }

  async handle(input: WireRequest): Promise<Reply> {
    const id = idOf(input.body);
    let call: Call;
    try {
      call = this.validate(input);
    } catch (err) {
      return this.fail(id, err, 'envelope');
    }
    if (call.id === NOTIFICATION) return { kind: 'empty', status: 202 };
    try {
      const method = this.methods.get(call.request.method);
      if (!method) throw new MethodNotFoundError(call.request.method);
      const answer = await method(call);
      if (answer instanceof StreamAnswer) return answer.reply;
      if (answer instanceof TextAnswer) return { kind: 'json-text', status: 200, text: this.resultText(call.id, answer) };
      return json(200, resultResponse(call.id, this.withServerInfo({ resultType: 'complete', ...answer })));
    } catch (err) {
      const stage = err instanceof MethodNotFoundError ? 'envelope' : 'handler';
      return this.fail(call.id, err, stage);
    }
  }

  /** Steps 2–5 of the order of checks (docs/architecture.md). Unknown methods (step 6) are found by `handle`. */
  private validate(input: WireRequest): Call {
    const message = classify(input.body);
    if (message.kind === 'response') throw new InvalidRequestError('a client never POSTs a JSON-RPC response on this wire');
    const params = message.message.params ?? {};
    const metaData = readMeta(params);
    if (!metaData) {
      throw new InvalidParamsError(
        `Missing or invalid _meta: ${META.protocolVersion} and ${META.clientCapabilities} are required on every request`,
      );
    }
    const version = metaData[META.protocolVersion];
    checkHeaders(input.headers, message.message.method, params, version);
    if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) throw new UnsupportedVersionError(version, SUPPORTED_VERSIONS);
    const clientInfo = metaData[META.clientInfo];
    const ctx: CallContext = {
      principal: input.principal,
      wire: 'sep2663',
      clientCapabilities: metaData[META.clientCapabilities],
      clientInfo: clientInfo ? { name: clientInfo.name, version: clientInfo.version } : undefined,
    };
    if (message.kind === 'notification') {
      return { id: NOTIFICATION, request: { ...message.message, id: NOTIFICATION }, params, ctx, headers: input.headers, signal: input.signal };
    }
    return { id: message.message.id, request: message.message, params, ctx, headers: input.headers, signal: input.signal };
  }

  private async discover(): Promise<Record<string, unknown>> {
    const upstream = await this.options.upstream.capabilities();
    // Only what the upstream serves, and what we translate for a stateless client: no list-changed
    // or subscription pushes (there is no session to push on besides listen).
    const served: Record<string, unknown> = {};
    for (const name of ['resources', 'prompts', 'completions'] as const) if (upstream[name]) served[name] = {};
    return {
      supportedVersions: [...DISCOVER_VERSIONS],
      capabilities: {
        tools: { listChanged: false },
        ...served,
        extensions: { [TASKS_EXTENSION]: {} },
      },
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
      ...this.cacheHint('public'),
    };
  }

  private async toolsList(): Promise<Record<string, unknown>> {
    const tools = await this.options.upstream.listTools();
    // The 2026 Tool has no execution.taskSupport: which calls become tasks is our policy.
    const modern = tools.map(({ execution: _execution, ...tool }) => tool);
    return { tools: modern, ...this.cacheHint('public') };
  }

  private async toolsCall(call: Call): Promise<Record<string, unknown> | TextAnswer> {
    const params = plainToolsCall(call.params) ?? parse(ToolsCallParams, call.params);
    const args = params.arguments ?? {};
    checkParamHeaders(call.headers, await this.options.catalog.get(params.name), args);
    if (params.inputResponses !== undefined && params.requestState === undefined) {
      throw new InvalidParamsError('inputResponses need the requestState of the answer that asked for them');
    }
    const outcome = await this.options.service.callTool(call.ctx, {
      name: params.name,
      arguments: args,
      optedIn: declaresTasks(call.ctx.clientCapabilities),
      // Not a getter in this literal: V8 gives each object with its own accessor closure a map of
      // its own, held from the literal's map until a full collection, and that kept every create's
      // request alive through young collections (docs/decisions/0011-v8-shapes-on-hot-paths.md).
      // One made after the client left is aborted at once (closeSignal), so nothing is missed.
      clientGone: call.signal,
      retry:
        params.requestState === undefined
          ? undefined
          : { requestState: params.requestState, inputResponses: params.inputResponses ?? {} },
    });
    switch (outcome.kind) {
      case 'input':
        return { resultType: 'input_required', inputRequests: outcome.inputRequests, requestState: outcome.requestState };
      case 'refused':
        throw new MissingCapabilityError(TASKS_CAPABILITY, `Tool '${params.name}' runs only as a task: declare the ${TASKS_EXTENSION} extension`);
      case 'task':
        return new TextAnswer(createTaskMembers(outcome.task), 'task');
      case 'result':
        return plainResult(outcome.result);
    }
  }

  private async tasksGet(call: Call): Promise<TextAnswer> {
    requireTasks(call);
    const taskId = plainTaskId(call.params) ?? parse(TaskIdParams, call.params).taskId;
    const task = await this.options.service.pollTask(call.ctx.principal, taskId);
    // The hot path: stringified once, straight into the answer's text, not copied into a result object first.
    return new TextAnswer(JSON.stringify(renderDetailedTask(task)).slice(1, -1));
  }

  private async tasksUpdate(call: Call): Promise<Record<string, unknown>> {
    requireTasks(call);
    const { taskId, inputResponses } = parse(TasksUpdateParams, call.params);
    await this.options.service.updateTask(call.ctx.principal, taskId, inputResponses);
    return {};
  }

  private async tasksCancel(call: Call): Promise<Record<string, unknown>> {
    requireTasks(call);
    const { taskId } = parse(TaskIdParams, call.params);
    await this.options.service.cancelTask(call.ctx.principal, taskId);
    return {};
  }

  private async listen(call: Call): Promise<StreamAnswer> {
    // Step 7 before step 8: asking for taskIds at all needs the extension, well-formed or not.
    const requested = (call.params.notifications as Record<string, unknown> | undefined)?.taskIds;
    if (requested !== undefined) requireTasks(call);
    const params = parse(ListenParams, call.params);
    const taskIds = params.notifications?.taskIds;
    if ((taskIds?.length ?? 0) > this.options.maxListenTaskIds) {
      throw new InvalidParamsError(`At most ${this.options.maxListenTaskIds} taskIds per listen`);
    }
    this.options.streams.admit();
    const slot = await this.options.service.openStream(call.ctx.principal);
    return new StreamAnswer(
      await listen({
        hub: this.listenHub,
        principal: call.ctx.principal,
        id: call.id,
        taskIds: taskIds ?? [],
        slot,
        fail: (err) => this.fail(call.id, err, 'handler'),
      }),
    );
  }

  private async translate(method: string, route: TranslatedRoute, call: Call): Promise<Record<string, unknown>> {
    const { _meta: _dropped, ...params } = call.params;
    const result = (await this.options.upstream.request(method, params, route.schema, call.signal()).catch((err: unknown) => {
      // A method the upstream does not serve is unknown here too: -32601 with its 404 (MCP 2026-07-28 error codes).
      if (err instanceof UpstreamRpcError && err.code === ErrorCode.MethodNotFound) throw new MethodNotFoundError(method, 'not served by the upstream');
      throw err;
    })) as Record<string, unknown>;
    return route.cache ? { ...result, ...this.cacheHint(route.cache) } : result;
  }

  private cacheHint(scope: 'public' | 'private'): Record<string, unknown> {
    return { ttlMs: scope === 'private' ? 0 : (this.options.cacheTtlMs ?? 60_000), cacheScope: scope };
  }

  /** What `json(200, resultResponse(id, withServerInfo({ resultType, ...members })))` writes, as text. */
  private resultText(id: JsonRpcId, answer: TextAnswer): string {
    const members = answer.members === '' ? '' : `${answer.members},`;
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"resultType":"${answer.resultType}",${members}${this.serverInfoMember}}}`;
  }

  /** Adds serverInfo to the `_meta` of a result object the caller just built (so it is changed in place). */
  private withServerInfo(result: Record<string, unknown>): Record<string, unknown> {
    const meta = result._meta as Record<string, unknown> | undefined;
    result._meta = meta ? { ...meta, [META.serverInfo]: this.options.serverInfo } : { [META.serverInfo]: this.options.serverInfo };
    return result;
  }

  private fail(id: JsonRpcId | null, err: unknown, stage: 'envelope' | 'handler'): Reply {
    const error = err instanceof ShimError ? err : new InternalError();
    return json(httpStatusFor(error.code, stage), errorResponse(id === NOTIFICATION ? null : id, error));
  }
}

/** Marks a notification inside the validated call; notifications get a bare 202. */
const NOTIFICATION = '\u0000notification';

/** A handler's own HTTP answer (the listen stream), told apart from a result by class, not by shape. */
class StreamAnswer {
  constructor(readonly reply: Reply) {}
}

/** A result given as the JSON members that follow `resultType` (no `_meta` among them), so that it is serialised once. */
class TextAnswer {
  constructor(
    readonly members: string,
    readonly resultType: 'complete' | 'task' = 'complete',
  ) {}
}

/**
 * An upstream's plain result, serialised once into the answer's text (the quick call's path): the
 * result's own members after `resultType`, then the shim's `_meta`. One that carries a `_meta` or a
 * `resultType` of its own goes the object way, which merges them.
 */
function plainResult(result: Record<string, unknown>): Record<string, unknown> | TextAnswer {
  if ('_meta' in result || 'resultType' in result) return result;
  return new TextAnswer(JSON.stringify(result).slice(1, -1));
}

function declaresTasks(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions as Record<string, unknown> | undefined;
  return typeof extensions?.[TASKS_EXTENSION] === 'object' && extensions[TASKS_EXTENSION] !== null;
}

/** Step 7: the extension must be declared on this very request, before any params check. */
function requireTasks(call: Call): void {
  if (!declaresTasks(call.ctx.clientCapabilities)) {
    throw new MissingCapabilityError(TASKS_CAPABILITY, `${call.request.method} needs the ${TASKS_EXTENSION} extension declared on this request`);
  }
}

function parse<S extends z.ZodType>(schema: S, params: Record<string, unknown>): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new InvalidParamsError(`Invalid params: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}
