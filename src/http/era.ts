import type { IncomingHttpHeaders } from 'node:http';
import { isModernVersion, META } from '../wire/sep2663/constants.js';

export type Era = 'modern' | 'legacy';

/**
 * Our era-dispatch rule (MCP 2026-07-28, Versioning › Backward Compatibility, lets one endpoint serve both eras): a 2026-era version header or `_meta` version
 * means the stateless wire; otherwise `initialize` or a session id means the legacy wire; and
 * anything else is validated as modern, which answers 400 and tells a modern client what we are.
 */
export function detectEra(headers: IncomingHttpHeaders, body: unknown): Era {
  const version = headers['mcp-protocol-version'];
  if (typeof version === 'string' && isModernVersion(version)) return 'modern';
  const obj = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const params = obj?.params as Record<string, unknown> | undefined;
  const meta = params?._meta as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object' && META.protocolVersion in meta) return 'modern';
  if (obj?.method === 'initialize' || headers['mcp-session-id'] !== undefined) return 'legacy';
  if (typeof version === 'string') return 'legacy';
  return 'modern';
}

/**
 * GET and DELETE carry no body, so only the version header can put them on the stateless wire
 * (which answers 405); every other one belongs to the legacy wire (our era-dispatch rule, above).
 */
export function detectBodylessEra(headers: IncomingHttpHeaders): Era {
  const version = headers['mcp-protocol-version'];
  return typeof version === 'string' && isModernVersion(version) ? 'modern' : 'legacy';
}
