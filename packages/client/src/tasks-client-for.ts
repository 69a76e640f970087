import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TasksClientForError } from './errors.js';
import { NoInputHandlerError } from './input-answers.js';
import { streamableHttpSettings } from './sdk-transport.js';
import { isRecord } from './shapes.js';
import { TasksClient } from './tasks-client.js';
import type { HeadersOption, InputRequestHandler, TasksClientOptions } from './types.js';

/**
 * Options of `tasksClientFor`: those of `TasksClient` except what the SDK client's transport
 * decides. `headers` are added after the transport's (and win on a clash).
 * `clientInfo` defaults to the SDK client's; `capabilities` to the input kinds it declared.
 */
export type TasksClientForOptions = Omit<TasksClientOptions, 'url' | 'fetch'>;

/** The input kinds a tasks helper can be asked to answer; other client capabilities do not apply to it. */
const INPUT_CAPABILITIES = ['elicitation', 'sampling', 'roots'] as const;

const helpers = new WeakMap<Client, { transport: unknown; helper: TasksClient }>();
const inputHandlers = new WeakMap<Client, InputRequestHandler>();

/**
 * Sets the input handler of the tasks helper of `client` (what `onInputRequest` is to a
 * TasksClient): the helper `tasksClientFor(client)` returns asks it, whether that helper exists
 * yet or not, and whether the client is connected yet or not. It is where the SDK client's
 * elicitation handler goes when the client is created in another module. `undefined` removes it.
 * A helper created with its own `onInputRequest` option keeps that one.
 */
export function setTaskInputHandler(client: Client, handler: InputRequestHandler | undefined): void {
  if (handler === undefined) inputHandlers.delete(client);
  else inputHandlers.set(client, handler);
}

/**
 * The tasks helper for an SDK `Client` connected over Streamable HTTP: same endpoint, headers
 * (`requestInit.headers`), `fetch`, and bearer token (the auth provider's current tokens, read on
 * every request). One helper per client and transport: later calls return the first one, so
 * task ids and poll state are shared; a client reconnected over another transport gets a new one.
 * Throws TasksClientForError: `not-connected`, `unsupported-transport` (stdio, SSE, ...), or
 * `options-after-create` when options are passed once a helper exists (they would be ignored).
 */
export function tasksClientFor(client: Client, options?: TasksClientForOptions): TasksClient {
  const transport = client.transport;
  const cached = helpers.get(client);
  if (cached && cached.transport === transport) {
    if (options !== undefined) {
      throw new TasksClientForError('options-after-create', 'tasksClientFor: this client already has a helper; pass options on the first call only');
    }
    return cached.helper;
  }
  const settings = streamableHttpSettings(transport);
  const own = options ?? {};
  const helper = new TasksClient({
    ...own,
    url: settings.url,
    fetch: settings.fetch,
    headers: withExtra(settings.headers, own.headers),
    // Read on every input request: setTaskInputHandler may come before or after this helper.
    onInputRequest:
      own.onInputRequest ??
      ((request, task) => {
        const handler = inputHandlers.get(client);
        if (!handler) throw new NoInputHandlerError(task?.taskId, request.key, request.method, request.params);
        return handler(request, task);
      }),
    clientInfo: own.clientInfo ?? sdkClientInfo(client),
    capabilities: own.capabilities ?? sdkInputCapabilities(client),
  });
  helpers.set(client, { transport, helper });
  return helper;
}

function withExtra(base: () => Promise<Record<string, string>>, extra: HeadersOption | undefined): HeadersOption {
  if (extra === undefined) return base;
  return async () => {
    // Through Headers, so that a name differing only in case replaces the transport's instead of joining it.
    const merged = new Headers(await base());
    for (const [name, value] of Object.entries(typeof extra === 'function' ? await extra() : extra)) merged.set(name, value);
    const out: Record<string, string> = {};
    merged.forEach((value, name) => (out[name] = value));
    return out;
  };
}

/*
 * The SDK Client keeps its `Implementation` and declared capabilities in TypeScript-private
 * fields (`_clientInfo`, `_capabilities`) with no public getter; both are read defensively
 * and ignored when their shape is not the expected one.
 */
function sdkClientInfo(client: Client): { name: string; version: string } | undefined {
  const info = (client as unknown as Record<string, unknown>)._clientInfo;
  return isRecord(info) && typeof info.name === 'string' && typeof info.version === 'string' ? { name: info.name, version: info.version } : undefined;
}

function sdkInputCapabilities(client: Client): Record<string, unknown> {
  const declared = (client as unknown as Record<string, unknown>)._capabilities;
  if (!isRecord(declared)) return {};
  return Object.fromEntries(INPUT_CAPABILITIES.filter((kind) => isRecord(declared[kind])).map((kind) => [kind, declared[kind]]));
}
