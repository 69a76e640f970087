import type { JsonRpcResponse } from '../jsonrpc/message.js';

/** Where the upstream is and the shim's own headers for it (the configured credentials). */
export interface UpstreamTarget {
  upstreamUrl: string;
  upstreamHeaders: Readonly<Record<string, string>>;
}

export interface UpstreamAnswer {
  status: number;
  sessionId?: string;
  /** The JSON-RPC response to our request, from a JSON or an SSE body. */
  response?: JsonRpcResponse;
}

/**
 * One request from the shim to the upstream in a client's upstream session, for the few
 * legacy requests whose answer the shim must rewrite (`initialize`, `tools/list`).
 */
export async function postUpstream(
  upstream: UpstreamTarget,
  message: Record<string, unknown>,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<UpstreamAnswer> {
  const res = await fetch(upstream.upstreamUrl, {
    method: 'POST',
    headers: { ...upstream.upstreamHeaders, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(message),
    signal,
  });
  const sessionId = res.headers.get('mcp-session-id') ?? undefined;
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const id = message.id;
  let response: JsonRpcResponse | undefined;
  if (type.includes('text/event-stream')) {
    for (const data of sseData(text)) {
      const parsed = safeJson(data) as JsonRpcResponse | undefined;
      if (parsed && 'id' in parsed && parsed.id === id && ('result' in parsed || 'error' in parsed)) response = parsed;
    }
  } else if (text) {
    response = safeJson(text) as JsonRpcResponse | undefined;
  }
  return { status: res.status, sessionId, response };
}

function* sseData(text: string): Generator<string> {
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/).filter((l) => l.startsWith('data:'));
    if (lines.length > 0) yield lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n');
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Ends an upstream session (a client's DELETE, or the shim's session lapsed). The upstream may
 * have dropped it already; nothing depends on the answer.
 */
export async function deleteUpstreamSession(upstream: UpstreamTarget, upstreamSessionId: string): Promise<void> {
  const res = await fetch(upstream.upstreamUrl, { method: 'DELETE', headers: { ...upstream.upstreamHeaders, 'mcp-session-id': upstreamSessionId } });
  await res.body?.cancel();
}
