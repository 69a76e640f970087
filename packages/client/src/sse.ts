/**
 * A minimal `text/event-stream` reader (the WHATWG event-stream rules this wire needs):
 * `data:` lines joined with `\n`, comments (`:`) and other fields skipped, any of CRLF, LF or
 * CR as a line end, one leading BOM dropped. Yields each event's data as text.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const lines = new LineSplitter();
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const line of lines.push(text)) {
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        if (field !== 'data') continue;
        const raw = colon === -1 ? '' : line.slice(colon + 1);
        data.push(raw.startsWith(' ') ? raw.slice(1) : raw);
      }
      // A line or event not closed when the stream ends is dropped, as the rules say.
      if (done) return;
    }
  } finally {
    // Stops the download when the consumer leaves early (e.g. after the response it wanted).
    reader.cancel().catch(() => undefined);
  }
}

/** Splits decoded text into lines across chunk boundaries, including a CRLF cut in two. */
export class LineSplitter {
  private buffer = '';
  private started = false;
  private lastWasCr = false;

  push(text: string): string[] {
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    if (this.lastWasCr && input.startsWith('\n')) input = input.slice(1);
    this.lastWasCr = false;
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < input.length; i++) {
      const ch = input[i];
      if (ch !== '\n' && ch !== '\r') continue;
      out.push(this.buffer + input.slice(start, i));
      this.buffer = '';
      if (ch === '\r') {
        if (i + 1 === input.length) this.lastWasCr = true;
        else if (input[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buffer += input.slice(start);
    return out;
  }
}
