/**
 * How deep a request's JSON may nest. MCP messages need a handful of levels and tool arguments
 * a few dozen at most; far deeper input only serves to overflow a recursive walker (a validator,
 * `JSON.stringify`, the upstream client), which would answer a client's mistake as our failure.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether a JSON text that `JSON.parse` accepted nests objects and arrays deeper than `max`.
 * One pass over the bytes, no recursion and no allocation: brackets count outside strings, and
 * UTF-8 continuation bytes never look like ASCII, so a multi-byte character cannot fool it.
 */
export function nestsDeeperThan(text: Uint8Array, max: number): boolean {
  // Nesting deeper than `max` takes at least max + 1 opening and as many closing brackets.
  if (text.length <= 2 * max + 1) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
