/** One request the client sent, as a wrapping fetch saw it. */
export interface RecordedRequest {
  method: string;
  headers: Headers;
  body: Record<string, unknown>;
  /** performance.now() when the client called fetch. */
  sentAt: number;
  /** performance.now() when the answer was fully read (undefined while in flight). */
  answeredAt?: number;
}

export interface RecordingFetch {
  fetch: typeof fetch;
  requests: RecordedRequest[];
  of(method: string): RecordedRequest[];
}

export type FetchHook = (request: RecordedRequest) => Promise<void> | void;

/**
 * Wraps the real fetch and records every JSON-RPC request. `before` may delay a request (to
 * force a race); JSON answers are buffered so `answeredAt` is when the client could read
 * them, while event streams pass through untouched.
 */
export function recordingFetch(before?: FetchHook): RecordingFetch {
  const requests: RecordedRequest[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body ?? '{}')) as Record<string, unknown>;
    const record: RecordedRequest = {
      method: String(body.method),
      headers: new Headers(init?.headers),
      body,
      sentAt: performance.now(),
    };
    requests.push(record);
    await before?.(record);
    const response = await fetch(input, init);
    if (!(response.headers.get('content-type') ?? '').includes('application/json')) return response;
    const text = await response.text();
    record.answeredAt = performance.now();
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: wrapped, requests, of: (method) => requests.filter((r) => r.method === method) };
}
