/** Names fixed by MCP 2026-07-28 and the SEP-2663 Tasks extension. */
export const PROTOCOL_VERSION = '2026-07-28';
export const SUPPORTED_VERSIONS = [PROTOCOL_VERSION] as const;
/** Advertised in server/discover: this era plus the legacy one the same endpoint serves. */
export const DISCOVER_VERSIONS = [PROTOCOL_VERSION, '2025-11-25'] as const;
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export const TASKS_CAPABILITY = { extensions: { [TASKS_EXTENSION]: {} } } as const;

/** A version string of the 2026 era or later belongs on this wire (our era-dispatch rule). */
export function isModernVersion(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= '2026-01-01';
}
