/**
 * The canonical task record: the one shape every store holds and every wire adapter renders.
 * Field names here are neutral; wire names (`ttl`, `pollInterval`, dialect statuses) live in
 * `src/mapping/`.
 */

export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const WIRES = ['sep2663', 'mcp-2025-11-25', 'tasks-create'] as const;
export type Wire = (typeof WIRES)[number];

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A request the running work needs answered: `elicitation/create`, `sampling/createMessage`, `roots/list`. */
export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

export interface ClientInfo {
  name: string;
  version: string;
}

export interface TaskRecord {
  taskId: string;
  /** Bound from the verified credential, never from client data. */
  principal: string;
  origin: Wire;
  /** Legacy wires only: the session that created the task (and later the last one that touched it). */
  sessionId?: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: TaskStatus;
  statusMessage?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  lastUpdatedAt: number;
  /** Set when a worker first picks the task up; the tasks/create dialect reads it as pending vs running. */
  startedAt?: number;
  /** Counted from `createdAt`. Always finite: the shim never hands out unlimited tasks, so nothing leaks. */
  ttlMs: number;
  pollIntervalMs: number;
  /** Present when `completed`: the upstream's CallToolResult exactly. */
  result?: Record<string, unknown>;
  /** Present when `failed`. */
  error?: JsonRpcErrorObject;
  /** Outstanding input requests by key. Keys are unique for the task's whole life. */
  inputRequests: Record<string, InputRequest>;
  /** Answers received, by key. A key here is settled: later answers to it are ignored. */
  inputResponses: Record<string, unknown>;
  cancelRequested: boolean;
  /** Capabilities the creating request declared; they decide which input kinds may be surfaced. */
  clientCapabilities: Record<string, unknown>;
  clientInfo?: ClientInfo;
  /**
   * Native execution only (docs/architecture.md, "Native execution"): the upstream's task that
   * backs this one and the upstream session it lives in, so that any replica can resume its mirror.
   */
  upstreamTaskId?: string;
  upstreamSessionId?: string;
}

/** What a caller supplies to create a task; the store fills nothing in, so replicas agree byte for byte. */
export type NewTask = Omit<
  TaskRecord,
  'inputRequests' | 'inputResponses' | 'cancelRequested' | 'status' | 'lastUpdatedAt' | 'upstreamTaskId' | 'upstreamSessionId'
>;

/**
 * What a status answer (a SEP-2663 `DetailedTask`) shows of a task: the record without what no
 * poll shows (arguments, answers, capabilities), so that a store can read only these fields.
 * `inputRequests` holds the outstanding requests of an `input_required` task and is empty otherwise.
 */
export type PolledTask = Pick<
  TaskRecord,
  'taskId' | 'status' | 'statusMessage' | 'createdAt' | 'lastUpdatedAt' | 'ttlMs' | 'pollIntervalMs' | 'result' | 'error' | 'inputRequests'
>;

/** The poll view of a whole record; it shares the record's values (a store clones what it hands out). */
export function polledOf(task: TaskRecord): PolledTask {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    result: task.result,
    error: task.error,
    inputRequests: task.status === 'input_required' ? task.inputRequests : {},
  };
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

export function expiresAt(task: Pick<TaskRecord, 'createdAt' | 'ttlMs'>): number {
  return task.createdAt + task.ttlMs;
}

export function isExpired(task: Pick<TaskRecord, 'createdAt' | 'ttlMs'>, now: number): boolean {
  return now >= expiresAt(task);
}
