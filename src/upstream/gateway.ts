import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ErrorCode, ShimError, UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../core/errors.js';
import type { NativeOutcome, NativeResume, NativeRun, ToolInvoker, UpstreamTasks } from '../core/ports.js';
import { declaresToolTasks } from '../core/policy.js';
import {
  executionMode,
  probeServerDiscover,
  type ExecutionMode,
  type UpstreamProtocolSetting,
  type UpstreamReport,
} from './discovery.js';
import { UpstreamRpc } from './client/rpc-client.js';
import { Sep2663UpstreamClient } from './client/sep2663-client.js';
import { MAX_TOOL_PAGES, MAX_TOOLS, SessionPool, type CallOptions, type SessionPoolOptions } from './client/session-pool.js';
import { Sep2663Tasks } from './sep2663-task.js';
import { CachedToolCatalog } from './tool-catalog.js';
import { DEFAULT_MIRROR_LIMITS, UpstreamTaskSession, type MirrorLimits } from './upstream-task.js';
import { DiscoverResult, ToolsListResult } from '../wire/sep2663/result-schemas.js';

export interface UpstreamGatewayOptions {
  url: string;
  /** The shim's own credentials at the upstream, on every request. */
  headers?: Readonly<Record<string, string>>;
  clientInfo: { name: string; version: string };
  protocol: UpstreamProtocolSetting;
  /** Idle held sessions kept (see SessionPool). */
  maxIdle?: number;
  /** Connections to the upstream for requests at once (see UpstreamRpc). */
  connections?: number;
  /** See SessionPool. */
  onUnreachable?: SessionPoolOptions['onUnreachable'];
  limits?: Partial<MirrorLimits>;
}

const NOT_NATIVE = Promise.resolve(false);
/** A failed discovery (upstream down at start) is tried again at most this often. */
const REDISCOVER_MS = 5_000;
const DISCOVER_TIMEOUT_MS = 5_000;
/** A translated request that names no bound of its own (the pooled SDK client's default). */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * The only door to the upstream, over one HTTP client (`http`, client/rpc-client.ts): the pooled
 * sessions for plain calls and translated requests, what the upstream speaks (learned once, or
 * pinned), the upstream sessions that run and mirror the upstream's own tasks (native execution),
 * the stateless 2026-07-28 client that runs and mirrors a SEP-2663 upstream's tasks (SEP-2663
 * execution), and the legacy sessions' traffic (passthrough, initialize, GET streams, DELETE).
 */
export class UpstreamGateway implements ToolInvoker, UpstreamTasks {
  readonly pool: SessionPool;
  readonly http: UpstreamRpc;
  readonly catalog: CachedToolCatalog;
  private readonly limits: MirrorLimits;
  private report: Promise<UpstreamReport> | undefined;
  private reportAt = 0;
  /** The report once learned without a problem: calls read it without waiting on a promise. */
  private learned: UpstreamReport | undefined;
  private readonly sessions = new Set<UpstreamTaskSession>();
  private readonly modern: Sep2663UpstreamClient;
  private readonly sep2663: Sep2663Tasks;
  private closed = false;

  constructor(private readonly options: UpstreamGatewayOptions) {
    this.http = new UpstreamRpc({ url: options.url, headers: options.headers, connections: options.connections, onUnreachable: options.onUnreachable });
    this.pool = new SessionPool(this.http, { clientInfo: options.clientInfo, maxIdle: options.maxIdle, onUnreachable: options.onUnreachable });
    this.catalog = new CachedToolCatalog(
      () => this.listTools(),
      // A 2026-07-28 upstream decides per call, not per tool: no taskSupport of its is a decision.
      async () => ((await this.discover()).protocol === '2026-07-28' ? {} : this.pool.capabilities()),
    );
    this.limits = { ...DEFAULT_MIRROR_LIMITS, ...options.limits };
    this.modern = new Sep2663UpstreamClient(this.http, options.clientInfo);
    this.sep2663 = new Sep2663Tasks(this.modern, this.limits, (operation, err) => {
      if (!this.closed) options.onUnreachable?.(operation, err);
    });
  }

  /** What the upstream speaks; a discovery that could not reach it is repeated on a later use. */
  discover(): Promise<UpstreamReport> {
    const now = Date.now();
    if (!this.report || now - this.reportAt > REDISCOVER_MS) {
      const previous = this.report;
      this.reportAt = now;
      this.report = (previous ? previous.then((r) => (r.problem ? this.learn() : r)) : this.learn()).then((report) => {
        if (!report.problem) this.learned = report;
        return report;
      });
    }
    return this.report;
  }

  async modeOf(tool: string): Promise<ExecutionMode> {
    const report = this.learned ?? (await this.discover());
    return executionMode(report, await this.catalog.get(tool));
  }

  /** True for a tool whose tasks the upstream runs itself, as a 2025-11-25 task server or a SEP-2663 server. */
  isNative(tool: string): Promise<boolean> {
    // An upstream known to run no tasks at all needs no look at the tool (every quick call asks).
    const learned = this.learned;
    if (learned && !learned.tasks && !learned.sep2663Tasks) return NOT_NATIVE;
    return this.modeOf(tool).then((mode) => mode !== 'shim');
  }

  /**
   * A synchronous call. A SEP-2663 upstream gets its polymorphic call, followed to the end if it
   * answers a task. A tool a 2025-11-25 upstream runs only as a task (`required`) is called with a
   * task and waited for; any other one is a plain call (an `optional` tool then runs without a task).
   */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    const report = this.learned ?? (await this.discover());
    const info = await this.catalog.get(name);
    const mode = executionMode(report, info);
    // A 2026-07-28 upstream has no session for the SDK client: its calls are stateless, task or not.
    const stateless = report.protocol === '2026-07-28';
    if (!stateless && (mode === 'shim' || (mode === 'native' && info?.execution?.taskSupport !== 'required'))) {
      return this.pool.callTool(name, args, options);
    }
    const run: NativeRun = {
      tool: name,
      args,
      ttlMs: options.timeoutMs,
      deadline: Date.now() + options.timeoutMs,
      signal: options.signal ?? new AbortController().signal,
      // A synchronous call has no record a client could cancel: its caller's signal ends it.
      cancel: new AbortController().signal,
      onInput: async (request, _id, signal) => {
        if (!options.onInput) {
          throw new ShimError(ErrorCode.MethodNotFound, `${request.method} is not available for this call: a plain call declares no input capability (call the tool as a task)`);
        }
        return options.onInput(request, signal);
      },
      onStatusMessage: (message) => options.onProgress?.(message),
      onBound: async () => true,
      clientCapabilities: options.onInput ? { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} } : {},
    };
    const outcome = stateless ? await this.sep2663.run(run) : await this.run(run);
    if (outcome.status === 'completed') return outcome.result;
    if (outcome.status === 'cancelled') throw Object.assign(new Error(outcome.statusMessage), { name: 'AbortError' });
    throw new UpstreamRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
  }

  async run(run: NativeRun): Promise<NativeOutcome> {
    if ((await this.modeOf(run.tool)) === 'sep2663') return this.sep2663.run(run);
    return this.withSession(undefined, async (session) => {
      const created = await session.create(run.tool, run.args, run.ttlMs, run.onInput, run.signal);
      if ('fault' in created) return created.fault;
      if ('result' in created) return { status: 'completed', result: created.result };
      // A task that ended while the upstream one was created (a cancel) gets the cancel forwarded.
      const stop = new AbortController();
      const forward = (): void => stop.abort();
      run.signal.addEventListener('abort', forward, { once: true });
      if (run.signal.aborted || !(await run.onBound(created.task.taskId, session.sessionId ?? ''))) stop.abort();
      try {
        return await session.mirror(created.task.taskId, created.task.pollIntervalMs, { ...run, signal: stop.signal });
      } finally {
        run.signal.removeEventListener('abort', forward);
      }
    });
  }

  async resume(resume: NativeResume): Promise<NativeOutcome> {
    // A SEP-2663 task lives in no session: its id is all the resumed mirror needs.
    if (executionMode(await this.discover(), undefined) === 'sep2663') return this.sep2663.resume(resume);
    return this.withSession(resume.upstreamSessionId || undefined, async (session) => {
      // Each request the lost mirror parked is answered under the upstream's own id when its answer comes.
      const redelivery = new AbortController();
      for (const pending of resume.outstanding) {
        pending
          .answer(redelivery.signal)
          .then(
            (result) => session.answer(pending.id, { result }),
            (err: unknown) =>
              redelivery.signal.aborted
                ? undefined
                : session.answer(pending.id, { error: err instanceof ShimError ? err.toJsonRpc() : { code: ErrorCode.InternalError, message: String(err) } }),
          )
          .catch(() => undefined); // a lost answer leaves the upstream task waiting: the mirror then ends at the TTL
      }
      try {
        return await session.mirror(resume.upstreamTaskId, undefined, resume);
      } finally {
        redelivery.abort();
      }
    });
  }

  async abandon(upstreamTaskId: string, upstreamSessionId: string): Promise<void> {
    // A SEP-2663 task lives in no session: a stateless tasks/cancel reaches it.
    if (!upstreamSessionId && executionMode(await this.discover(), undefined) === 'sep2663') return this.sep2663.cancelOnly(upstreamTaskId).catch(() => undefined);
    await this.withSession(upstreamSessionId || undefined, (session) => session.cancelOnly(upstreamTaskId)).catch(() => undefined);
  }

  /**
   * One plain request (resources, prompts, ping, and whatever a legacy session sends a 2026-07-28
   * upstream): on a pooled session, or as one stateless 2026-07-28 request that declares no
   * optional client capability, so that a conforming upstream never answers it with MRTR input.
   */
  async request<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: S,
    signal?: AbortSignal,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<z.infer<S>> {
    if ((await this.discover()).protocol !== '2026-07-28') {
      const result = await this.pool.request(method, params, signal, timeoutMs);
      const parsed = schema.safeParse(result);
      if (!parsed.success) throw new UpstreamProtocolError(`the upstream's ${method} result is malformed (${parsed.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ')})`);
      return parsed.data;
    }
    return this.modern.call(method, params ?? {}, schema, { capabilities: {}, timeoutMs, signal });
  }

  /** The upstream's `server/discover` answer (2026-07-28), asked afresh: what a legacy session's `initialize` is built from. */
  serverDiscover(signal?: AbortSignal): Promise<z.infer<typeof DiscoverResult>> {
    return this.modern.call('server/discover', {}, DiscoverResult, { capabilities: {}, timeoutMs: DISCOVER_TIMEOUT_MS, signal });
  }

  /** Every tool, all pages (within MAX_TOOL_PAGES and MAX_TOOLS): from a 2026-07-28 upstream statelessly, else on a pooled session. */
  async listTools(): Promise<Tool[]> {
    if ((await this.discover()).protocol !== '2026-07-28') return this.pool.listTools();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= MAX_TOOL_PAGES) throw new UpstreamProtocolError(`the upstream's tools/list goes on past ${MAX_TOOL_PAGES} pages`);
      const answer = await this.modern.call('tools/list', cursor ? { cursor } : {}, ToolsListResult, { capabilities: {}, timeoutMs: DISCOVER_TIMEOUT_MS });
      tools.push(...(answer.tools as Tool[]));
      if (tools.length > MAX_TOOLS) throw new UpstreamProtocolError(`the upstream's tools/list lists more than ${MAX_TOOLS} tools`);
      cursor = answer.nextCursor || undefined;
      if (cursor === undefined) return tools;
    }
  }

  /** The upstream's 2025-11-25 capabilities; a 2026-07-28 upstream that does not serve that era has none. */
  async capabilities(): Promise<Record<string, unknown>> {
    if ((await this.discover()).protocol !== '2026-07-28') return this.pool.capabilities();
    return this.pool.capabilities().catch(() => ({}));
  }

  async ping(): Promise<boolean> {
    if ((await this.discover()).protocol !== '2026-07-28') return this.pool.ping();
    return this.serverDiscover().then(
      () => true,
      () => false,
    );
  }

  /** Closes every client. Task sessions stay open at the upstream: another replica resumes their mirrors. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.sessions].map((session) => session.close(false)));
    await this.pool.close();
    await this.http.close();
  }

  private async withSession<T>(sessionId: string | undefined, fn: (session: UpstreamTaskSession) => Promise<T>): Promise<T> {
    let session: UpstreamTaskSession;
    try {
      session = await UpstreamTaskSession.open(this.http, this.options, this.limits, sessionId);
    } catch (err) {
      if (err instanceof UnavailableError && !this.closed) this.options.onUnreachable?.('initialize (task session)', err);
      throw err;
    }
    this.sessions.add(session);
    try {
      return await fn(session);
    } finally {
      this.sessions.delete(session);
      // The upstream keeps a session until told otherwise; a closing replica leaves it for a resume.
      await session.close(!this.closed);
    }
  }

  private async learn(): Promise<UpstreamReport> {
    const { protocol } = this.options;
    const pinned = protocol !== 'auto';
    if (protocol !== '2025-11-25') {
      const discovered = await probeServerDiscover(this.modern, DISCOVER_TIMEOUT_MS);
      if (discovered) return { protocol: '2026-07-28', pinned, tasks: false, sep2663Tasks: discovered.tasksExtension };
      if (pinned) return { protocol: '2026-07-28', pinned, tasks: false, sep2663Tasks: false, problem: 'the upstream did not answer server/discover' };
    }
    try {
      const capabilities = await this.pool.capabilities();
      return { protocol: '2025-11-25', pinned, tasks: declaresToolTasks(capabilities), sep2663Tasks: false };
    } catch (err) {
      return { protocol: 'unknown', pinned, tasks: false, sep2663Tasks: false, problem: `the upstream did not answer initialize (${err instanceof Error ? err.message : String(err)})` };
    }
  }
}
