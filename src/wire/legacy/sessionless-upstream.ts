import { z } from 'zod';
import { ErrorCode, InternalError, InvalidParamsError, ShimError, UpstreamProtocolError } from '../../core/errors.js';
import type { RequestCancel, SessionStore } from '../../session/session-store.js';
import { classify, errorResponse, isRecord, resultResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/message.js';
import type { UpstreamAnswer, UpstreamRpc } from '../../upstream/client/rpc-client.js';
import type { Reply } from '../reply.js';
import { META } from '../sep2663/constants.js';
import { TRANSLATED } from '../translated-methods.js';
import { LEGACY_PROTOCOL_VERSION } from './constants.js';

/** What the bridge needs of the upstream gateway (src/upstream/gateway.ts), the only door to the upstream. */
export interface StatelessUpstream {
  /** What the upstream was found (or pinned) to speak. */
  protocol(): Promise<'2025-11-25' | '2026-07-28' | 'unknown'>;
  /** The upstream's `server/discover` result. */
  serverDiscover(signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** One stateless 2026-07-28 request, its result checked against `schema`. */
  request<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S, signal: AbortSignal, timeoutMs: number): Promise<z.infer<S>>;
  /** A plain tools/call, carried to its end when the upstream answers a task handle or asks for input. */
  callTool(name: string, args: Record<string, unknown>, options: { timeoutMs: number; signal: AbortSignal }): Promise<Record<string, unknown>>;
}

export interface SessionlessOptions {
  upstream: StatelessUpstream;
  /** The shim's own name, for an `initialize` whose upstream names no serverInfo of its own. */
  serverInfo: { name: string; version: string };
  /** The longest a translated request (a plain tools/call carried through its task) may run. */
  timeoutMs: () => number;
  /** The fleet's channel of request cancels (the session store's): a cancel received anywhere reaches the replica running the request. */
  cancels: Pick<SessionStore, 'publishCancel' | 'onRequestCancel'>;
}

/**
 * The longest string request id whose cancel goes to the other replicas. A cancel costs the
 * fleet one message to every replica and keeps nothing; this bounds its size (docs/security.md).
 * Ids that clients mint are numbers or UUIDs, far shorter.
 */
export const MAX_FLEET_CANCEL_ID_LENGTH = 256;

/** A notification or a stray answer of the session: accepted, and for the upstream nothing to hear. */
function accepted(): Reply {
  return { kind: 'empty', status: 202, fromUpstream: true };
}

/** Session-era versions a client may ask for and get as asked; any other one is offered 2025-11-25. */
const SESSION_VERSIONS: ReadonlySet<string> = new Set([LEGACY_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05']);

/**
 * The upstream's server capabilities a session the shim holds can serve. Only the bare features:
 * list-changed and subscription pushes, `logging/setLevel` and extensions need a channel from the
 * upstream to the session that a stateless upstream does not have.
 */
const SESSION_CAPABILITIES = ['tools', 'resources', 'prompts', 'completions'] as const;

/** Members of a 2026-07-28 result that a 2025-11-25 session has no use for (MCP 2026-07-28: `resultType`, and the cache hints of Server › Discovery). */
const MODERN_RESULT_MEMBERS = ['resultType', 'ttlMs', 'cacheScope'] as const;

/** Any result: the upstream's answer to a method the shim has no schema for is the client's to read. */
const AnyResult = z.looseObject({});

/**
 * The method's result schema, or an MRTR answer (MCP 2026-07-28, Patterns › MRTR) let through as it is, so that it is named for
 * what it is rather than as a result missing its fields; other failures keep their issues' paths.
 */
function orInputRequired(schema: z.ZodType): z.ZodType {
  return AnyResult.transform((value, ctx) => {
    if (value.resultType === 'input_required') return value;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

/** What the upstream may answer each translated method. */
const SESSION_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map([...TRANSLATED].map(([method, route]) => [method, orInputRequired(route.schema)]));

const ServerInfo = z.object({ name: z.string(), version: z.string() });

/**
 * A legacy session in front of an upstream that has none (a pure MCP 2026-07-28 server, kind 3
 * of docs/architecture.md): the shim answers `initialize` itself from the upstream's
 * `server/discover`, and each other request of the session becomes one stateless 2026-07-28
 * request through the gateway, answered under the client's id. Client notifications and answers
 * to requests the shim never sent end here (202): a stateless upstream has nothing to receive
 * them. Task methods and the GET stream stay the legacy adapter's; they never reach this module.
 */
export class SessionlessUpstream {
  /** Settled once the upstream's protocol is known; unknown (unreachable) is asked again next time. */
  private stateless: boolean | undefined;
  /** Translated requests running on this replica, by session and request id, for `notifications/cancelled`. */
  private readonly running = new Map<string, AbortController>();
  /** This replica's one subscription to the fleet's cancels, taken once the upstream is found stateless. */
  private stopListening: (() => void) | undefined;

  constructor(private readonly options: SessionlessOptions) {}

  /** True when the upstream speaks 2026-07-28, which has no sessions: this module then serves every session's non-task traffic. */
  async active(): Promise<boolean> {
    if (this.stateless !== undefined) return this.stateless;
    const protocol = await this.options.upstream.protocol();
    if (protocol !== 'unknown') this.stateless = protocol === '2026-07-28';
    if (protocol === '2026-07-28') this.stopListening ??= this.options.cancels.onRequestCancel((cancel) => this.abortRunning(cancel));
    return protocol === '2026-07-28';
  }

  /** Stops hearing the fleet's cancels; the session store closes its connection itself. */
  close(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }

  /** Known to keep sessions: the legacy adapter relays a forwarded message at once, paying for nothing here. */
  get keepsSessions(): boolean {
    return this.stateless === false;
  }

  /** The upstream's answer to one request, as the JSON-RPC response under the client's id; never throws. */
  async answer(request: JsonRpcRequest, signal: AbortSignal = new AbortController().signal): Promise<JsonRpcResponse> {
    try {
      return resultResponse(request.id, await this.result(request, signal));
    } catch (err) {
      return errorResponse(request.id, asShimError(err, request.method, signal));
    }
  }

  /**
   * A message the legacy adapter would forward, answered through the gateway instead. The answer
   * is the upstream's, carried by the shim (`fromUpstream`: recorded as passthrough); `clientGone`
   * aborts the translated request.
   */
  async serve(clientSessionId: string, body: Buffer | undefined, clientGone: AbortSignal): Promise<Reply> {
    const message = readMessage(body);
    if (message?.kind !== 'request') {
      if (message?.kind === 'notification' && message.message.method === 'notifications/cancelled') return this.cancel(clientSessionId, message.message.params?.requestId);
      return accepted();
    }
    const request = message.message;
    const key = runningKey(clientSessionId, request.id);
    const stop = new AbortController();
    const gone = (): void => stop.abort();
    // A second request under an id still running is the client's mistake: the first keeps its own abort.
    const tracked = !this.running.has(key);
    if (tracked) this.running.set(key, stop);
    clientGone.addEventListener('abort', gone, { once: true });
    try {
      return { kind: 'json', status: 200, body: await this.answer(request, stop.signal), fromUpstream: true };
    } finally {
      clientGone.removeEventListener('abort', gone);
      if (tracked) this.running.delete(key);
    }
  }

  /**
   * Aborts the named request of the session where it runs: here when it runs here, else on the
   * replica that runs it, through the fleet's channel (every replica looks the request up in its
   * own running map; none keeps anything). A request that is not running anywhere is not stopped
   * by a cancel that came before it or after it ended. Scoped by the session id, which the
   * adapter checked against the caller's principal: another session's request ids name nothing.
   */
  private async cancel(clientSessionId: string, requestId: unknown): Promise<Reply> {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return accepted();
    const cancel = { sessionId: clientSessionId, requestId };
    if (this.abortRunning(cancel)) return accepted();
    if (typeof requestId === 'string' && requestId.length > MAX_FLEET_CANCEL_ID_LENGTH) return accepted();
    // Redis unreachable: the adapter answers 503 with Retry-After, and the client may send it again.
    await this.options.cancels.publishCancel(cancel);
    return accepted();
  }

  /** Aborts the request if it runs on this replica; true when it did. */
  private abortRunning(cancel: RequestCancel): boolean {
    const running = this.running.get(runningKey(cancel.sessionId, cancel.requestId));
    running?.abort();
    return running !== undefined;
  }

  private async result(request: JsonRpcRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const { upstream } = this.options;
    const { _meta: _clientMeta, ...params } = request.params ?? {};
    switch (request.method) {
      case 'initialize':
        return this.initialize(params, signal);
      case 'tools/call': {
        const args: unknown = params.arguments ?? {};
        if (typeof params.name !== 'string' || !isRecord(args)) {
          throw new InvalidParamsError('tools/call needs params.name (a string) and params.arguments (an object, if present)');
        }
        return sessionResult(await upstream.callTool(params.name, args, { timeoutMs: this.options.timeoutMs(), signal }), request.method);
      }
      default: {
        // Every schema here is of an object: a result is a JSON-RPC result object.
        const schema = SESSION_SCHEMAS.get(request.method) ?? AnyResult;
        const result = (await upstream.request(request.method, params, schema, signal, this.options.timeoutMs())) as Record<string, unknown>;
        return sessionResult(result, request.method);
      }
    }
  }

  /**
   * The session's `initialize` result, built from the upstream's `server/discover`: the version
   * the client asked for when the shim serves it, the upstream's features a session can use, its
   * instructions and serverInfo. The legacy adapter adds the tasks capability, as for any upstream.
   */
  private async initialize(params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    const discovered = await this.options.upstream.serverDiscover(signal);
    const offered = isRecord(discovered.capabilities) ? discovered.capabilities : {};
    const capabilities: Record<string, unknown> = {};
    for (const name of SESSION_CAPABILITIES) if (offered[name] !== undefined) capabilities[name] = {};
    const meta = isRecord(discovered._meta) ? discovered._meta : {};
    const named = ServerInfo.safeParse(meta[META.serverInfo]);
    const requested = params.protocolVersion;
    return {
      protocolVersion: typeof requested === 'string' && SESSION_VERSIONS.has(requested) ? requested : LEGACY_PROTOCOL_VERSION,
      capabilities,
      serverInfo: named.success ? named.data : this.options.serverInfo,
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    };
  }
}

/**
 * One request the legacy adapter sends the upstream to rewrite its answer (`initialize`,
 * `tools/list`): through the bridge when the upstream has no sessions, else in the client's
 * upstream session.
 */
export async function askUpstream(
  deps: { upstream: Pick<UpstreamRpc, 'post'>; sessionless?: SessionlessUpstream },
  request: JsonRpcRequest,
  headers: Record<string, string>,
): Promise<UpstreamAnswer> {
  const bridge = deps.sessionless;
  if (bridge && (await bridge.active())) return { status: 200, response: await bridge.answer(request) };
  return deps.upstream.post(request, headers);
}

function readMessage(body: Buffer | undefined): JsonRpcMessage | undefined {
  if (!body) return undefined;
  try {
    return classify(JSON.parse(body.toString('utf8')));
  } catch {
    // The adapter classified this body before forwarding it: nothing else reaches here.
    return undefined;
  }
}

function runningKey(clientSessionId: string, id: JsonRpcId): string {
  return `${clientSessionId}\n${typeof id}:${id}`;
}

/**
 * A 2026-07-28 result as a session reads it: without the members of that era, and without the
 * serverInfo `_meta` (a session learnt it at `initialize`). An MRTR `input_required` answer is
 * not relayed: the shim declares no input capability upstream, so the upstream broke that rule.
 */
function sessionResult(result: Record<string, unknown>, method: string): Record<string, unknown> {
  if (result.resultType !== undefined && result.resultType !== 'complete') {
    throw new UpstreamProtocolError(
      result.resultType === 'input_required'
        ? `the upstream asked for input on ${method} although the shim declared no input capability; a 2025-11-25 session gets input only inside a task (call the tool with params.task)`
        : `the upstream answered ${method} with resultType '${String(result.resultType)}'`,
    );
  }
  const out: Record<string, unknown> = { ...result };
  for (const member of MODERN_RESULT_MEMBERS) delete out[member];
  if (isRecord(out._meta) && META.serverInfo in out._meta) {
    const { [META.serverInfo]: _serverInfo, ...meta } = out._meta;
    if (Object.keys(meta).length > 0) out._meta = meta;
    else delete out._meta;
  }
  return out;
}

/** The JSON-RPC error a session gets: the upstream's own error unchanged, anything else naming the upstream. */
function asShimError(err: unknown, method: string, signal: AbortSignal): ShimError {
  if (signal.aborted) return new ShimError(ErrorCode.RequestCancelled, `${method} was cancelled`);
  if (err instanceof ShimError) return err;
  return new InternalError(`The upstream's ${method} failed: ${err instanceof Error ? err.message : String(err)}`);
}
