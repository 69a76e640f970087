/**
 * The public API of mcp-tasks-shim: run a replica, configure it, and read the mapping tables.
 * The client helper has its own entry, `mcp-tasks-shim/client`.
 */
export { startShim, MCP_PATH, type Shim, type ShimOptions } from './shim.js';
export { loadConfig, ConfigError } from './config/load.js';
export { DEFAULT_CONFIG, type ShimConfig, type PolicyFile } from './config/schema.js';
export { TASK_POLICIES, type TaskPolicy, type ToolPolicy } from './core/policy.js';
export { TASK_STATUSES, WIRES, type TaskStatus, type Wire, type TaskRecord } from './core/task.js';
export { ErrorCode, ShimError } from './core/errors.js';
export { STATUS_TABLE, LEGACY_STATUS_TO_SEP2663, CANCELLED_AS_ERROR, DIALECT_STATUSES } from './mapping/statuses.js';
export { FIELD_TABLE, LEGACY_FIELD_TO_SEP2663 } from './mapping/fields.js';
export { METHOD_TABLE } from './mapping/methods.js';
export { TRANSITIONS } from './mapping/transitions.js';
export { RedisTaskStore } from './store/redis/redis-store.js';
export { EmbeddedTaskStore } from './store/embedded/embedded-store.js';
export type { TaskStore } from './store/task-store.js';
export type { TaskChange } from './core/task-change.js';
export { startDemoUpstream } from './demo-upstream/server.js';
