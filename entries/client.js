// `mcp-tasks-shim/client`: the client helper, published on its own as @mcp-tasks-shim/client (docs/decisions/0011-client-package.md).
export {
  TasksClient,
  tasksClientFor,
  setTaskInputHandler,
  MemoryTaskIdStore,
  callOptionsFrom,
  toLegacyTask,
  McpRequestError,
  McpHttpError,
  TaskFailedError,
  TaskCancelledError,
  TasksClientForError,
  InvalidAnswerError,
  NoInputHandlerError,
} from '@mcp-tasks-shim/client';
