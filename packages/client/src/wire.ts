/**
 * The names of the MCP 2026-07-28 wire and the SEP-2663 Tasks extension this package speaks.
 * The shim keeps its own (src/wire/sep2663/, src/core/task.ts); this package cannot import them,
 * because it installs without the shim, so test/client/wire-parity.test.ts pins both to the same
 * values.
 */
export const PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
} as const;

export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** The task fields whose names differ between wires, as SEP-2663 names them. */
export const TTL_FIELD = 'ttlMs';
export const POLL_INTERVAL_FIELD = 'pollIntervalMs';

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

const ENCODED = /^=\?base64\?.*\?=$/s;
const PLAIN = /^[\x21-\x7E]([\x20-\x7E\t]*[\x21-\x7E])?$/;

/**
 * A header value as `Mcp-Name`/`Mcp-Param-*` carry it (MCP 2026-07-28, Transports › Streamable HTTP, header value encoding): as is when every
 * character is visible ASCII, space or tab with no edge whitespace, else `=?base64?…?=` of its
 * UTF-8 bytes. `btoa` and TextEncoder rather than Buffer, so that it runs in browsers too.
 */
export function encodeHeaderValue(value: string): string {
  if (PLAIN.test(value) && !ENCODED.test(value)) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}
