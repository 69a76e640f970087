/**
 * The client helper: call tools that may become SEP-2663 tasks on the MCP 2026-07-28 wire.
 * Named exports only; everything else in this folder is internal. Nothing here needs Node:
 * the Node-only parts are in `./node` (`@mcp-tasks-shim/client/node`).
 */
export { TasksClient } from './tasks-client.js';
export { setTaskInputHandler, tasksClientFor, type TasksClientForOptions } from './tasks-client-for.js';
export { MemoryTaskIdStore } from './memory-task-id-store.js';
export { callOptionsFrom, type SdkRequestOptions } from './request-options.js';
export { toLegacyTask, type LegacyTask } from './legacy-task.js';
export {
  McpRequestError,
  McpHttpError,
  TaskFailedError,
  TaskCancelledError,
  TasksClientForError,
  type TasksClientForErrorCode,
} from './errors.js';
export { InvalidAnswerError } from './shapes.js';
export { NoInputHandlerError } from './input-answers.js';
export type {
  CallToolOptions,
  CallToolResult,
  HeadersOption,
  InputRequestHandler,
  SignalOptions,
  TaskError,
  TaskIdEntry,
  TaskIdStore,
  TaskInputRequest,
  TaskSnapshot,
  TaskStatus,
  TaskStatusUpdate,
  TasksClientOptions,
} from './types.js';
