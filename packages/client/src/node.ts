/** The Node-only parts of the client helper (they use node:fs): `@mcp-tasks-shim/client/node`. */
export { FileTaskIdStore, CorruptTaskIdStoreError } from './file-task-id-store.js';
