import { createParser, type EventSourceParser } from 'eventsource-parser';

/**
 * The shim's one reader of the upstream's `text/event-stream` bodies (a POST answered as SSE, the
 * upstream's GET stream): a maintained parser of the WHATWG rules, handing on each event's data.
 * Comments, ids and event names are not the shim's business: the data is a JSON-RPC message.
 */
export function sseMessages(onData: (data: string) => void): EventSourceParser {
  return createParser({ onEvent: (event) => onData(event.data) });
}

/** The JSON-RPC messages of a whole event-stream body; events that are not JSON are skipped. */
export function parseSseBody(text: string): unknown[] {
  const out: unknown[] = [];
  const parser = sseMessages((data) => {
    const parsed = safeJson(data);
    if (parsed !== undefined) out.push(parsed);
  });
  parser.feed(text);
  // A last event without its blank line still counts, as the upstream meant to send it.
  parser.reset({ consume: true });
  return out;
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
