export { FileTaskIdStore, CorruptTaskIdStoreError } from '@mcp-tasks-shim/client/node';
