import { encodeHeaderValue } from './wire.js';
import { isRecord } from './shapes.js';

/**
 * `Mcp-Param-{Name}` headers (MCP 2026-07-28, Transports › Streamable HTTP, request headers): a tool argument whose `inputSchema` property carries
 * `"x-mcp-header": "{Name}"` is mirrored into a header. The schemas come from `tools/list`,
 * which the client reads only when a server first refuses a `tools/call` for a missing header.
 */
export type ToolHeaderMap = ReadonlyMap<string, ReadonlyArray<{ property: string; header: string }>>;

export function headerMapFromTools(tools: unknown[]): ToolHeaderMap {
  const map = new Map<string, Array<{ property: string; header: string }>>();
  for (const tool of tools) {
    if (!isRecord(tool) || typeof tool.name !== 'string') continue;
    const properties = isRecord(tool.inputSchema) ? tool.inputSchema.properties : undefined;
    if (!isRecord(properties)) continue;
    const mirrored = Object.entries(properties).flatMap(([property, schema]) =>
      isRecord(schema) && typeof schema['x-mcp-header'] === 'string' ? [{ property, header: schema['x-mcp-header'] }] : [],
    );
    if (mirrored.length > 0) map.set(tool.name, mirrored);
  }
  return map;
}

/** The headers one call needs: present, non-null arguments only, values encoded per MCP 2026-07-28 header value encoding. */
export function paramHeaders(map: ToolHeaderMap | undefined, tool: string, args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { property, header } of map?.get(tool) ?? []) {
    const text = headerText(args[property]);
    if (text !== undefined) out[`Mcp-Param-${header}`] = encodeHeaderValue(text);
  }
  return out;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
