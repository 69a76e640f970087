/** Rules both session stores share, so that they agree to the byte. */

/**
 * Event ids are `<streamId>_<seq>`, where `seq` counts the events of the whole session, so an id
 * is unique across the session's streams and names the stream it belongs to (MCP 2025-11-25, Transports › Streamable HTTP, resumability).
 */

/** The largest seq an id may carry: beyond it a number no longer round-trips. */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
const SEQ_PATTERN = /^[1-9][0-9]{0,15}$/;

export function formatEventId(streamId: string, seq: number): string {
  return `${streamId}_${seq}`;
}

/**
 * The stream and seq of an event id; undefined for anything that cannot be one of ours. The seq
 * follows the last underscore, so the split is unambiguous even for a stream id with one.
 */
export function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const split = eventId.lastIndexOf('_');
  if (split <= 0) return undefined;
  const digits = eventId.slice(split + 1);
  if (!SEQ_PATTERN.test(digits)) return undefined;
  const seq = Number(digits);
  return seq <= MAX_SEQ ? { streamId: eventId.slice(0, split), seq } : undefined;
}

/** TTLs and retentions (whole ms, rounded up) and bounds must be positive; anything else is a caller's bug. */
export function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return Math.ceil(value);
}

/** The order of `tasks/list` (newest first, ties by task id descending), as Redis orders a ZSET: by bytes. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Default bound of each stream's replay log. */
export const DEFAULT_MAX_EVENTS = 1_000;
