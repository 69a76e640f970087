// `mcp-tasks-shim/client`: the client helper, shipped inside this package (`#client`, packages/client/dist) and published on its own as @mcp-tasks-shim/client (docs/decisions/0050-one-tarball.md).
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
} from '#client';
