import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Headers the shim itself sets on upstream requests (framing, sessions, resumption) or that only
 * make sense per hop; a configured value for one of them would break the exchange.
 */
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

/** RFC 9110 field-name token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible characters, spaces and tabs: what HTTP/1.1 carries as a field value. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * `{"<header name>": "<value>"}` sent with every request to the upstream. Values are credentials
 * as often as not, so a problem names the header, never its value.
 */
export const UpstreamHeadersSchema = z
  .record(z.string(), z.string({ error: 'each value must be a string' }))
  .superRefine((headers, ctx) => {
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (!TOKEN.test(name)) ctx.addIssue({ code: 'custom', message: `'${name}' is not a valid header name` });
      else if (RESERVED.has(lower)) ctx.addIssue({ code: 'custom', message: `header '${name}' is set by the shim itself and cannot be configured` });
      else if (seen.has(lower)) ctx.addIssue({ code: 'custom', message: `header '${name}' is given more than once` });
      if (/[\r\n\0]/.test(value)) ctx.addIssue({ code: 'custom', message: `the value of header '${name}' contains CR, LF or NUL` });
      else if (!FIELD_VALUE.test(value)) ctx.addIssue({ code: 'custom', message: `the value of header '${name}' contains characters not allowed in a header` });
      seen.add(lower);
    }
  })
  .transform((headers) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])));

export const UPSTREAM_HEADER_FLAGS = {
  'upstream-headers-file': { type: 'string' },
} as const;

/**
 * `SHIM_UPSTREAM_HEADERS` (JSON) and the file of `--upstream-headers-file` /
 * `SHIM_UPSTREAM_HEADERS_FILE`, together. A header named in both is a problem rather than a
 * silent precedence, since either value may be the credential the operator meant.
 */
export function resolveUpstreamHeaders(
  flags: Partial<Record<keyof typeof UPSTREAM_HEADER_FLAGS, string>>,
  env: Record<string, string | undefined>,
  problems: string[],
): Record<string, string> | undefined {
  const sources: Array<{ name: string; text: string }> = [];
  if (env.SHIM_UPSTREAM_HEADERS) sources.push({ name: 'SHIM_UPSTREAM_HEADERS', text: env.SHIM_UPSTREAM_HEADERS });
  const file = flags['upstream-headers-file'] ?? (env.SHIM_UPSTREAM_HEADERS_FILE || undefined);
  if (file !== undefined) {
    try {
      sources.push({ name: `upstream headers file ${file}`, text: readFileSync(file, 'utf8') });
    } catch (err) {
      problems.push(`upstream headers file ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      return undefined;
    }
  }
  if (sources.length === 0) return undefined;

  const merged: Record<string, string> = {};
  const before = problems.length;
  for (const { name, text } of sources) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // JSON.parse quotes the text around the error, which may be a credential.
      problems.push(`${name}: not a JSON object`);
      continue;
    }
    const parsed = UpstreamHeadersSchema.safeParse(json);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((issue) => `${name}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`));
      continue;
    }
    for (const [header, value] of Object.entries(parsed.data)) {
      if (header in merged) problems.push(`${name}: header '${header}' is also set by SHIM_UPSTREAM_HEADERS`);
      merged[header] = value;
    }
  }
  return problems.length === before ? merged : undefined;
}
