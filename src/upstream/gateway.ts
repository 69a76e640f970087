import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ErrorCode, ShimError, UnavailableError, UpstreamRpcError } from '../core/errors.js';
import type { NativeOutcome, NativeResume, NativeRun, ToolInvoker, UpstreamTasks } from '../core/ports.js';
import { declaresToolTasks } from '../core/policy.js';
import {
  executionMode,
  probeServerDiscover,
  type ExecutionMode,
  type UpstreamProtocolSetting,
  type UpstreamReport,
} from './discovery.js';
import { UpstreamHttp } from './http-client.js';
import { UpstreamPool, type CallOptions, type UpstreamPoolOptions } from './pool.js';
import type { SdkClientOptions } from './sdk-client.js';
import { CachedToolCatalog } from './tool-catalog.js';
import { DEFAULT_MIRROR_LIMITS, UpstreamTaskSession, type MirrorLimits } from './upstream-task.js';

export interface UpstreamGatewayOptions extends SdkClientOptions {
  protocol: UpstreamProtocolSetting;
  /** Idle pooled clients kept (see UpstreamPool). */
  maxIdle?: number;
  /** See UpstreamPool. */
  onUnreachable?: UpstreamPoolOptions['onUnreachable'];
  limits?: Partial<MirrorLimits>;
}

/** A failed discovery (upstream down at start) is tried again at most this often. */
const REDISCOVER_MS = 5_000;
const DISCOVER_TIMEOUT_MS = 5_000;

export interface ToolMode {
  name: string;
  taskSupport?: string;
  mode: ExecutionMode;
}

/**
 * The only door to the upstream: the pooled SDK clients for plain calls and translated requests,
 * what the upstream speaks (learned once, or pinned), the upstream sessions that run and mirror
 * the upstream's own tasks (native execution), and one HTTP client for the legacy sessions'
 * traffic (passthrough, initialize, GET streams, DELETE).
 */
export class UpstreamGateway implements ToolInvoker, UpstreamTasks {
  readonly pool: UpstreamPool;
  readonly http: UpstreamHttp;
  readonly catalog: CachedToolCatalog;
  private readonly limits: MirrorLimits;
  private report: Promise<UpstreamReport> | undefined;
  private reportAt = 0;
  private readonly sessions = new Set<UpstreamTaskSession>();
  private closed = false;

  constructor(private readonly options: UpstreamGatewayOptions) {
    this.pool = new UpstreamPool(options);
    this.http = new UpstreamHttp({ upstreamUrl: options.url, upstreamHeaders: options.headers, onUnreachable: options.onUnreachable });
    this.catalog = new CachedToolCatalog(
      () => this.pool.listTools(),
      () => this.pool.capabilities(),
    );
    this.limits = { ...DEFAULT_MIRROR_LIMITS, ...options.limits };
  }

  /** What the upstream speaks; a discovery that could not reach it is repeated on a later use. */
  discover(): Promise<UpstreamReport> {
    const now = Date.now();
    if (!this.report || now - this.reportAt > REDISCOVER_MS) {
      const previous = this.report;
      this.reportAt = now;
      this.report = (previous ? previous.then((r) => (r.problem ? this.learn() : r)) : this.learn());
    }
    return this.report;
  }

  async modeOf(tool: string): Promise<ExecutionMode> {
    const [report, info] = await Promise.all([this.discover(), this.catalog.get(tool)]);
    return executionMode(report, info);
  }

  /** Every tool and how its tasks run, for the start-up lines. */
  async toolModes(): Promise<ToolMode[]> {
    const [report, tools] = await Promise.all([this.discover(), this.catalog.refresh()]);
    return tools.map((tool) => ({ name: tool.name, taskSupport: tool.execution?.taskSupport, mode: executionMode(report, tool) }));
  }

  async isNative(tool: string): Promise<boolean> {
    return (await this.modeOf(tool)) === 'native';
  }

  /**
   * A synchronous call. A tool the upstream runs only as a task (`required`) is called with a task
   * and waited for; any other one is a plain call (an `optional` tool then runs without a task).
   */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    const info = await this.catalog.get(name);
    if (info?.execution?.taskSupport !== 'required' || executionMode(await this.discover(), info) !== 'native') {
      return this.pool.callTool(name, args, options);
    }
    const outcome = await this.run({
      tool: name,
      args,
      ttlMs: options.timeoutMs,
      deadline: Date.now() + options.timeoutMs,
      signal: options.signal ?? new AbortController().signal,
      onInput: (request, _id, signal) => {
        if (!options.onInput) throw new ShimError(ErrorCode.MethodNotFound, `${request.method} is not available for this call`);
        return options.onInput(request, signal);
      },
      onStatusMessage: (message) => options.onProgress?.(message),
      onBound: async () => true,
    });
    if (outcome.status === 'completed') return outcome.result;
    if (outcome.status === 'cancelled') throw Object.assign(new Error(outcome.statusMessage), { name: 'AbortError' });
    throw new UpstreamRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
  }

  async run(run: NativeRun): Promise<NativeOutcome> {
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

  /** Plain requests for stateless clients (resources, prompts, ping). */
  request<S extends z.ZodType>(method: string, params: Record<string, unknown> | undefined, schema: S, signal?: AbortSignal): Promise<z.infer<S>> {
    return this.pool.request(method, params, schema, signal);
  }

  listTools(): Promise<Tool[]> {
    return this.pool.listTools();
  }

  capabilities(): Promise<Record<string, unknown>> {
    return this.pool.capabilities();
  }

  ping(): Promise<boolean> {
    return this.pool.ping();
  }

  /** Closes every client. Task sessions stay open at the upstream: another replica resumes their mirrors. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.sessions].map((session) => session.close(false)));
    await Promise.all([this.pool.close(), this.http.close()]);
  }

  private async withSession(sessionId: string | undefined, fn: (session: UpstreamTaskSession) => Promise<NativeOutcome>): Promise<NativeOutcome> {
    let session: UpstreamTaskSession;
    try {
      session = await UpstreamTaskSession.open(this.options, this.limits, sessionId);
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
      const discovered = await probeServerDiscover(this.options.url, this.options.headers ?? {}, this.options.clientInfo, DISCOVER_TIMEOUT_MS);
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
