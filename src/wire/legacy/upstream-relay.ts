import type { SessionStream } from './session-stream.js';
import type { UpstreamTarget } from './upstream-http.js';

/**
 * Relays the upstream's own standalone GET stream for this session into the client's GET
 * stream, under the shim's event ids, so the client has one stream carrying both. An upstream
 * that offers no GET stream (405) is fine: there is nothing to relay.
 */
export function relayUpstreamStream(upstream: UpstreamTarget, upstreamSessionId: string | undefined, stream: SessionStream): () => void {
  const abort = new AbortController();
  if (!upstreamSessionId) return () => undefined;
  void (async () => {
    const res = await fetch(upstream.upstreamUrl, {
      method: 'GET',
      headers: { ...upstream.upstreamHeaders, accept: 'text/event-stream', 'mcp-session-id': upstreamSessionId },
      signal: abort.signal,
    });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let boundary: RegExpExecArray | null;
      while ((boundary = /\r?\n\r?\n/.exec(buffer))) {
        const block = buffer.slice(0, boundary.index);
        buffer = buffer.slice(boundary.index + boundary[0].length);
        const data = block
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (!data) continue;
        try {
          await stream.send(JSON.parse(data) as Record<string, unknown>);
        } catch {
          // Not JSON: nothing a client could use.
        }
      }
    }
  })().catch(() => undefined);
  return () => abort.abort();
}
