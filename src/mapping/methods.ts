/**
 * Old methods and what replaces them on SEP-2663. `null` means there is no replacement and
 * client code must change shape (the codemod leaves a marker there).
 */
export interface MethodRow {
  wire: 'mcp-2025-11-25' | 'tasks-create';
  method: string;
  sep2663: string | null;
  note: string;
}

export const METHOD_TABLE: readonly MethodRow[] = [
  { wire: 'tasks-create', method: 'tasks/create', sep2663: 'tools/call', note: 'declare the tasks extension; the result is a CallToolResult or a CreateTaskResult' },
  { wire: 'tasks-create', method: 'tasks/status', sep2663: 'tasks/get', note: 'the result inlines result, error or inputRequests' },
  { wire: 'tasks-create', method: 'tasks/list', sep2663: null, note: 'keep the task ids you created in your own storage' },
  { wire: 'tasks-create', method: 'tasks/cancel', sep2663: 'tasks/cancel', note: 'an empty ack; read the outcome with tasks/get' },
  { wire: 'mcp-2025-11-25', method: 'tools/call', sep2663: 'tools/call', note: 'params.task is ignored; the server decides' },
  { wire: 'mcp-2025-11-25', method: 'tasks/get', sep2663: 'tasks/get', note: 'the result inlines result, error or inputRequests' },
  { wire: 'mcp-2025-11-25', method: 'tasks/result', sep2663: null, note: 'read result or error from tasks/get' },
  { wire: 'mcp-2025-11-25', method: 'tasks/list', sep2663: null, note: 'keep the task ids you created in your own storage' },
  { wire: 'mcp-2025-11-25', method: 'tasks/cancel', sep2663: 'tasks/cancel', note: 'an empty ack, also on terminal tasks' },
  { wire: 'mcp-2025-11-25', method: 'notifications/tasks/status', sep2663: 'notifications/tasks', note: 'only on subscriptions/listen with taskIds' },
  { wire: 'mcp-2025-11-25', method: 'elicitation/create', sep2663: 'tasks/update', note: 'answer inputRequests from tasks/get with tasks/update' },
];
