import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode as SdkErrorCode,
  ListRootsRequestSchema,
  McpError,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { ShimError, UnavailableError, UpstreamRpcError } from '../core/errors.js';
import type { InputRequest } from '../core/task.js';
import { relayValidator } from './relay-validator.js';

/** Answers one server → client request (elicitation, sampling, roots); `id` is the upstream's JSON-RPC id. */
export type UpstreamInputHandler = (request: InputRequest, id: RequestId, signal: AbortSignal) => Promise<Record<string, unknown>>;

export interface SdkClientOptions {
  url: string;
  /** The shim's own credentials at the upstream, on every request. */
  headers?: Readonly<Record<string, string>>;
  clientInfo: { name: string; version: string };
}

export interface OpenedClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/**
 * An official SDK client of the upstream, with the input kinds the shim can relay declared. Its
 * server → client requests go to `input()` (whatever handler is current: a pooled client serves
 * one call after another); without a handler the upstream gets -32601. With `sessionId` the
 * client rejoins that upstream session without `initialize` (a mirror resumed on another replica).
 */
export async function openSdkClient(options: SdkClientOptions, input: () => UpstreamInputHandler | undefined, sessionId?: string): Promise<OpenedClient> {
  const client = new Client(options.clientInfo, {
    capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
    jsonSchemaValidator: relayValidator,
  });
  const forward = (method: string) => async (request: { params?: Record<string, unknown> }, extra: { signal: AbortSignal; requestId: RequestId }) => {
    const handler = input();
    if (!handler) throw new McpError(SdkErrorCode.MethodNotFound, `${method} is not available for this call`);
    const { _meta: _ignored, ...params } = request.params ?? {};
    try {
      return await handler({ method, params }, extra.requestId, extra.signal);
    } catch (err) {
      // The core answers the upstream with our errors; the SDK sends only McpError codes as they are.
      if (err instanceof ShimError) throw new McpError(err.code, err.message, err.data);
      throw err;
    }
  };
  client.setRequestHandler(ElicitRequestSchema, forward('elicitation/create') as never);
  client.setRequestHandler(CreateMessageRequestSchema, forward('sampling/createMessage') as never);
  client.setRequestHandler(ListRootsRequestSchema, forward('roots/list') as never);
  const transport = new StreamableHTTPClientTransport(new URL(options.url), { sessionId, requestInit: { headers: { ...options.headers } } });
  try {
    await client.connect(transport);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw translateError(err);
  }
  return { client, transport };
}

/**
 * Attempts to open an upstream session before a call gives up. Opening sends no tool call, so a
 * failed attempt (a reset or refused connection while the upstream is swamped) is safe to repeat.
 */
const CONNECT_ATTEMPTS = 3;
const CONNECT_RETRY_MS = 200;

/** `connect()`, repeated while the upstream cannot be reached; a JSON-RPC error will not change its mind. */
export async function connectWithRetries<T>(connect: () => Promise<T>, stopped: () => boolean = () => false): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (err) {
      if (attempt >= CONNECT_ATTEMPTS || stopped() || !(err instanceof UnavailableError)) throw err;
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS * attempt));
    }
  }
}

const SDK_PREFIX = /^MCP error -?\d+: /;

/**
 * A JSON-RPC error from the upstream is the tool's own answer and travels on unchanged (the SDK
 * prefixes its message, which we strip). Anything else means we could not reach the upstream.
 */
export function translateError(err: unknown): unknown {
  if (err instanceof ShimError) return err;
  if (err instanceof McpError) {
    if (err.code === SdkErrorCode.ConnectionClosed) return unavailable('upstream', err);
    return new UpstreamRpcError(err.code, err.message.replace(SDK_PREFIX, ''), err.data);
  }
  if (err instanceof Error && err.name === 'AbortError') return err;
  return unavailable(`upstream (${err instanceof Error ? err.message : String(err)})`, err);
}

/** Keeps what went wrong below (`ECONNREFUSED` under `fetch failed`) as the cause, for the log. */
function unavailable(what: string, cause: unknown): UnavailableError {
  const error = new UnavailableError(what);
  error.cause = cause;
  return error;
}
