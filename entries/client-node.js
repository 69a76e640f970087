// `mcp-tasks-shim/client/node`: the Node-only parts of the client helper (`#client/node`, packages/client/dist).
export { FileTaskIdStore, CorruptTaskIdStoreError } from '#client/node';
