/** Names fixed by MCP 2025-11-25 (and shared by the tasks/create dialect). */
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Server capabilities merged into the upstream's on `initialize` (2025-11-25 only). */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/** Pushed input requests carry ids of this shape, so their answers find their task and key. */
export function pushId(taskId: string, key: string): string {
  return `task:${taskId}:${key}`;
}

export function parsePushId(id: string | number | null): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string' || !id.startsWith('task:')) return undefined;
  const rest = id.slice(5);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { taskId: rest.slice(0, colon), key: rest.slice(colon + 1) };
}
