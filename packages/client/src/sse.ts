import { createParser } from 'eventsource-parser';

/**
 * Reads a `text/event-stream` body with eventsource-parser (the WHATWG rules; small, no
 * dependencies, browser-safe, and the one the shim itself uses): yields each event's data as
 * text, comments and other fields skipped. An event the stream ended before closing is dropped.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  // The decoder drops one leading BOM, as the rules ask.
  const decoder = new TextDecoder('utf-8');
  const due: string[] = [];
  const parser = createParser({ onEvent: (event) => due.push(event.data) });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      while (due.length > 0) yield due.shift() as string;
      if (done) return;
    }
  } finally {
    // Stops the download when the consumer leaves early (e.g. after the response it wanted).
    reader.cancel().catch(() => undefined);
  }
}
