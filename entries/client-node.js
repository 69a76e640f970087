// `mcp-tasks-shim/client/node`: the Node-only parts of @mcp-tasks-shim/client.
export { FileTaskIdStore, CorruptTaskIdStoreError } from '@mcp-tasks-shim/client/node';
