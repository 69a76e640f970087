import type { WireRequest } from '../request.js';
import { HeaderMismatchError } from '../../core/errors.js';
import type { ToolInfo } from '../../core/ports.js';
import { decodeHeaderValue } from './header-value.js';

/**
 * Which `params` field `Mcp-Name` must equal, per method (SEP-2663 adds the three task methods).
 * A Map, since the method comes from the wire (`constructor` is a property of every object).
 */
export const NAME_FIELD: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

function single(headers: WireRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Header checks (MCP 2026-07-28, Transports › Streamable HTTP, request headers), step 4 of the order of checks (docs/architecture.md). Throws HeaderMismatchError (-32020). */
export function checkHeaders(
  headers: WireRequest['headers'],
  method: string,
  params: Record<string, unknown>,
  bodyVersion: string,
): void {
  const version = single(headers, 'mcp-protocol-version');
  if (version === undefined) throw new HeaderMismatchError('MCP-Protocol-Version header is required');
  if (version !== bodyVersion) {
    throw new HeaderMismatchError(`MCP-Protocol-Version '${version}' does not match _meta protocolVersion '${bodyVersion}'`);
  }
  const headerMethod = single(headers, 'mcp-method');
  if (headerMethod === undefined) throw new HeaderMismatchError('Mcp-Method header is required');
  if (headerMethod !== method) throw new HeaderMismatchError(`Mcp-Method '${headerMethod}' does not match method '${method}'`);

  const field = NAME_FIELD.get(method);
  if (!field) return;
  const raw = single(headers, 'mcp-name');
  if (raw === undefined) throw new HeaderMismatchError(`Mcp-Name header is required for ${method}`);
  const decoded = decodeHeaderValue(raw);
  if (decoded === undefined) throw new HeaderMismatchError('Mcp-Name has invalid base64 encoding');
  const bodyValue = params[field];
  // A non-string body value is a params error, reported later in the order of checks.
  if (typeof bodyValue === 'string' && decoded !== bodyValue) {
    throw new HeaderMismatchError(`Mcp-Name '${raw}' does not match params.${field} '${bodyValue}'`);
  }
}

/** `Mcp-Param-{Name}` for tool arguments whose schema property carries `x-mcp-header`. */
export function checkParamHeaders(headers: WireRequest['headers'], tool: ToolInfo | undefined, args: Record<string, unknown>): void {
  const properties = tool?.inputSchema?.properties;
  if (!properties) return;
  for (const [property, schema] of Object.entries(properties)) {
    const headerName = (schema as Record<string, unknown> | null)?.['x-mcp-header'];
    if (typeof headerName !== 'string') continue;
    const value = Object.hasOwn(args, property) ? args[property] : undefined;
    if (value === undefined || value === null) continue;
    const raw = single(headers, `mcp-param-${headerName.toLowerCase()}`);
    if (raw === undefined) throw new HeaderMismatchError(`Mcp-Param-${headerName} header is required when '${property}' is present`);
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) throw new HeaderMismatchError(`Mcp-Param-${headerName} has invalid base64 encoding`);
    if (!sameParam(decoded, value)) {
      throw new HeaderMismatchError(`Mcp-Param-${headerName} '${raw}' does not match argument '${property}'`);
    }
  }
}

function sameParam(header: string, value: unknown): boolean {
  if (typeof value === 'string') return header === value;
  if (typeof value === 'boolean') return header === String(value);
  // Integers compare numerically, so `42.0` equals `42`.
  if (typeof value === 'number') return header.trim() !== '' && Number(header) === value;
  return false;
}
