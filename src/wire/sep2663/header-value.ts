/**
 * The `=?base64?…?=` encoding of `Mcp-Name` and `Mcp-Param-*` values (SEP-2243).
 * Returns undefined when the encoded form is malformed, which makes the header a mismatch.
 */
const ENCODED = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function decodeHeaderValue(raw: string): string | undefined {
  const match = ENCODED.exec(raw);
  if (!match) return raw;
  const payload = match[1] as string;
  if (payload.length % 4 !== 0 || !BASE64.test(payload)) return undefined;
  const bytes = Buffer.from(payload, 'base64');
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Plain only when every character is visible ASCII, space or tab, with no edge whitespace. */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7E]([\x20-\x7E\t]*[\x21-\x7E])?$/.test(value) && !ENCODED.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
