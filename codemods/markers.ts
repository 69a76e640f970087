import { METHOD_TABLE } from '../src/mapping/methods.js';

/** Every marker comment starts with this, so `grep -rn MCP-TASKS-MIGRATE` finds what is left to do. */
export const MARKER_PREFIX = 'MCP-TASKS-MIGRATE';

function note(method: string): string {
  return METHOD_TABLE.find((row) => row.method === method)?.note ?? '';
}

/**
 * Each marker code, the instruction written into the code, and what it means (docs/codemod.md
 * lists the same). The instruction is stable text: tools may match on it.
 */
export const MARKERS = {
  'unresolved-client': {
    why: 'the receiver is not provably an SDK Client (an any, an import without types, a value reached through ?.)',
    instruction: 'the codemod cannot prove this receiver is an SDK Client (an import, an any, or reached through ?.): if it is one, call tasksClientFor(<client>) from mcp-tasks-shim/client here',
  },
  'client-url': {
    why: 'the transport is not a StreamableHTTPClientTransport built where the codemod can read its URL',
    instruction: 'set url to the MCP endpoint (Streamable HTTP) of the server: the codemod could not read it from the transport',
  },
  'stream-shape': {
    why: 'the stream is not consumed by one for-await loop that branches on message.type',
    instruction: 'callToolStream is not consumed by one for-await loop that branches on message.type: use tasksClient.callTool(name, args, { onTaskCreated, onStatus }) or startTool + waitForTask',
  },
  'mcp-error-check': {
    why: 'the rewritten calls throw other errors; which ones this check means is for a person to say',
    instruction: "the rewritten task calls throw the client helper's errors (McpRequestError, McpHttpError, TaskFailedError, TaskCancelledError from mcp-tasks-shim/client), not the SDK's McpError: check for those here",
  },
  'cancel-terminal': {
    why: 'the code expects the cancel to fail, which SEP-2663 no longer does',
    instruction: 'SEP-2663: cancelling a task that already finished succeeds (an empty ack) instead of failing: code that expects this cancel to reject must change',
  },
  'task-shape': {
    why: 'the dialect task is handed on whole and its receivers expect the old shape',
    instruction: "this is now the helper's TaskSnapshot (SEP-2663 statuses, ttlMs, pollIntervalMs, result/error inlined), not the tasks/status dialect's task: convert it where it is passed on",
  },
  'tasks-list': {
    why: 'tasks/list has no SEP-2663 equivalent',
    instruction: `tasks/list is gone in SEP-2663: ${note('tasks/list')} (TasksClient keeps them in its taskStore; resumeAll() drives them)`,
  },
  'cancel-result': {
    why: 'the old cancel answer is used and the task id is an expression the codemod will not repeat',
    instruction: 'tasks/cancel now answers an empty ack: read the outcome with tasksClient.getTask(taskId) after tasksClient.cancelTask(taskId)',
  },
  'plain-result': {
    why: 'rewritten; the guard throws where SEP-2663 may answer without a task',
    instruction: 'the server now decides whether tools/call becomes a task: handle the plain result (kind === "result") instead of throwing',
  },
  'create-task-result': {
    why: 'the CreateTaskResult is used whole (returned, stored, passed on), not only as .task.*',
    instruction: 'a task-augmented tools/call whose CreateTaskResult is used other than as .task.*: use tasksClient.startTool(name, args), which answers { kind: "task", task } or { kind: "result", result }',
  },
  'dialect-create': {
    why: 'the tasks/create flow is not the create-poll-branch shape the codemod recognises',
    instruction: 'tasks/create is not followed by a poll loop the codemod recognises: use tasksClient.callTool(name, args) to run it to its end, or startTool(name, args) + waitForTask(taskId)',
  },
  'status-notifications': {
    why: 'the handler has no migrated call in reach, or is not an inline one-parameter function',
    instruction: `notifications/tasks/status is not sent on SEP-2663 (${note('notifications/tasks/status')}): pass this handler as onStatus to tasksClient.callTool/waitForTask`,
  },
  'elicitation-handler': {
    why: 'the handler uses its extra argument, answers task-augmented requests, or the helper has a handler already',
    instruction: `this elicitation handler answers task input: ${note('elicitation/create')}; pass it as onInputRequest to the TasksClient, or to setTaskInputHandler(client, …) for a client created elsewhere (it was left: it uses its extra argument, answers task-augmented requests with a task, or the helper already has a handler)`,
  },
  'elicitation-moved': {
    why: 'rewritten; the SDK client may still send requests that elicit',
    instruction: 'the elicitation handler moved to the client helper (onInputRequest, setTaskInputHandler); this SDK Client may still send requests: register a handler on it again if they elicit',
  },
  'sdk-client-unused': {
    why: 'rewritten; the SDK client is left with nothing but connect and handlers',
    instruction: 'this SDK Client no longer sends task requests: remove it (and its connect/close) if nothing else needs it',
  },
  'status-literal': {
    why: 'the status compared is not traceable to a migrated task',
    instruction: 'a tasks/create-dialect status word compared with a status the codemod cannot trace to a task: SEP-2663 tasks use working, input_required, completed, failed, cancelled',
  },
  'custom-transport': {
    why: 'the request is built by hand or its method is chosen at run time',
    instruction: 'a legacy tasks request built by hand (custom transport) or forwarded with a method chosen at run time (a proxy): send it through TasksClient (callTool, getTask, updateTask, cancelTask) instead',
  },
  'task-method': {
    why: 'the method is sent through a wrapper, a constant passed on, or a request the codemod cannot rewrite',
    instruction: 'a legacy tasks method is named here (a constant, a wrapper that sends it, a request the codemod cannot rewrite): call TasksClient (callTool, getTask, waitForTask, cancelTask) instead; tasks/result is waitForTask, tasks/list has no equivalent',
  },
  'task-params': {
    why: 'task-augmentation params the codemod cannot drop without changing what the call sends',
    instruction: 'task-augmentation params (task: { ttl }) are ignored on SEP-2663, where the server decides: drop them and call tasksClient.callTool or startTool',
  },
  'client-task-host': {
    why: 'the client hosts tasks for its own work (a handler answers task-augmented requests), or the options are not in reach',
    instruction: 'SEP-2663 has no client-hosted tasks: remove capabilities.tasks, taskStore and taskMessageQueue from this client, and answer task-augmented requests plainly',
  },
  'old-task-fields': {
    why: 'a hand-written old task shape, or a field read on a value the codemod cannot trace to the helper',
    instruction: 'an old task shape: SEP-2663 tasks have ttlMs and pollIntervalMs (not ttl, pollInterval), statuses working/input_required/completed/failed/cancelled, and result/error inlined in tasks/get',
  },
} as const satisfies Record<string, { why: string; instruction: string }>;

export type MarkerCode = keyof typeof MARKERS;

/** Codes for files (and tsconfigs) that could not be processed as asked (report rows only, never written into code). */
export const FILE_ERROR_CODES = ['parse-error', 'transform-error', 'read-error', 'write-error', 'too-large', 'symlink-skipped', 'tsconfig-error'] as const;
export type FileErrorCode = (typeof FILE_ERROR_CODES)[number];

export function isFileErrorCode(code: string): code is FileErrorCode {
  return (FILE_ERROR_CODES as readonly string[]).includes(code);
}

export function markerComment(code: MarkerCode): string {
  return `// ${MARKER_PREFIX}(${code}): ${MARKERS[code].instruction}`;
}

export function hasMarker(commentText: string, code: MarkerCode): boolean {
  return commentText.includes(`${MARKER_PREFIX}(${code})`);
}
