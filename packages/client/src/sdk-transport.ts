import { TasksClientForError } from './errors.js';
import { isRecord } from './shapes.js';

/** What the helper needs from an SDK `StreamableHTTPClientTransport`. */
export interface StreamableHttpSettings {
  url: string;
  /** The transport's own fetch with its `requestInit` (minus headers) applied, as the SDK applies it. */
  fetch: typeof fetch;
  /** Per request: `Authorization` from the auth provider's current tokens, then the `requestInit` headers. */
  headers: () => Promise<Record<string, string>>;
}

/** The slice of an SDK OAuthClientProvider the helper calls. */
interface TokenSource {
  tokens(): Promise<{ access_token: string } | undefined> | { access_token: string } | undefined;
}

/**
 * Reads the settings of the SDK (1.x) `StreamableHTTPClientTransport` a client is connected
 * over. The SDK exposes none of them publicly (only `sessionId` and `protocolVersion`), so
 * this reads the TypeScript-private fields `_url`, `_requestInit`, `_authProvider` and
 * `_fetch` that its constructor stores the options in; they are plain properties at run time.
 * The transport is recognised by shape, not `instanceof`, so that this package needs no
 * run-time import of the SDK and works when the app's SDK copy is not the one it would import.
 * `terminateSession` and `resumeStream` exist only on the Streamable HTTP transport (not on
 * SSE, stdio, WebSocket or in-memory ones).
 */
export function streamableHttpSettings(transport: unknown): StreamableHttpSettings {
  if (transport === undefined || transport === null) {
    throw new TasksClientForError('not-connected', 'tasksClientFor: the client is not connected; call client.connect(transport) first');
  }
  const t = transport as Record<string, unknown>;
  const isStreamableHttp = typeof t.terminateSession === 'function' && typeof t.resumeStream === 'function';
  const url = t._url instanceof URL ? t._url.href : typeof t._url === 'string' ? t._url : undefined;
  if (!isStreamableHttp || url === undefined) {
    const kind = typeof t.constructor === 'function' && t.constructor.name ? t.constructor.name : 'this transport';
    throw new TasksClientForError(
      'unsupported-transport',
      `tasksClientFor: ${kind} is not supported; the tasks helper speaks HTTP and needs a client connected with StreamableHTTPClientTransport`,
    );
  }

  const requestInit = isRecord(t._requestInit) ? (t._requestInit as RequestInit) : {};
  const { headers: initHeaders, ...initRest } = requestInit;
  const baseFetch = typeof t._fetch === 'function' ? (t._fetch as typeof fetch) : undefined;
  const authProvider = isTokenSource(t._authProvider) ? t._authProvider : undefined;

  return {
    url,
    fetch: (input, init) => (baseFetch ?? globalThis.fetch)(input, { ...initRest, ...init }),
    headers: async () => {
      const out: Record<string, string> = {};
      const tokens = authProvider ? await authProvider.tokens() : undefined;
      if (tokens?.access_token) out.authorization = `Bearer ${tokens.access_token}`;
      new Headers(initHeaders).forEach((value, name) => (out[name] = value));
      return out;
    },
  };
}

function isTokenSource(value: unknown): value is TokenSource {
  return isRecord(value) && typeof value.tokens === 'function';
}
