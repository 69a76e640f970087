/**
 * Which tool calls become tasks. The policy per tool comes from the policy file first; then from
 * the upstream's `execution.taskSupport`, but only when the upstream declares tasks for
 * `tools/call` (an upstream without that capability has decided nothing: the official SDK marks
 * every plain tool `forbidden`); else from the configured default.
 */
export const TASK_POLICIES = ['forbidden', 'optional', 'required', 'auto'] as const;
export type TaskPolicy = (typeof TASK_POLICIES)[number];

export interface ToolPolicy {
  mode: TaskPolicy;
  /** `auto` and `required`: how long the call may run before the client gets a task handle. */
  syncWindowMs?: number;
  /** A worker lost mid-run may re-run the call instead of failing the task. */
  idempotent?: boolean;
}

/** What the core does with one `tools/call`. */
export type CallPlan =
  | { kind: 'sync' }
  /**
   * `windowMs` (a required tool): the call runs synchronously that long first, so that input it
   * asks for before its task is announced can go back as MRTR.
   */
  | { kind: 'task'; windowMs?: number }
  | { kind: 'auto'; windowMs: number }
  | { kind: 'refuse'; reason: 'task-required' };

export type UpstreamTaskSupport = 'forbidden' | 'optional' | 'required';

export interface PolicySources {
  configured: Readonly<Record<string, ToolPolicy>>;
  fallback: TaskPolicy;
  autoWindowMs: number;
}

/**
 * The configured policy of a tool. Tool names come from the wire: only an own property counts,
 * so that `__proto__` or `constructor` is a tool like any other, not a property of every object.
 */
export function configuredPolicy(sources: Pick<PolicySources, 'configured'>, tool: string): ToolPolicy | undefined {
  return Object.hasOwn(sources.configured, tool) ? sources.configured[tool] : undefined;
}

/** What the upstream says about one tool, as far as policy goes. */
export interface UpstreamToolFacts {
  /** The upstream declares `capabilities.tasks.requests.tools.call`: its `taskSupport` is a decision. */
  declaresTasks: boolean;
  /** The tool's `execution.taskSupport`; absent means `forbidden` (MCP 2025-11-25). */
  taskSupport?: UpstreamTaskSupport;
}

export const POLICY_SOURCES = ['policy file', 'default', 'upstream'] as const;
export type PolicySource = (typeof POLICY_SOURCES)[number];

export interface ResolvedPolicy {
  policy: ToolPolicy;
  source: PolicySource;
}

export function resolvePolicy(tool: string, sources: PolicySources, upstream: UpstreamToolFacts): ResolvedPolicy {
  const configured = configuredPolicy(sources, tool);
  if (configured) return { policy: configured, source: 'policy file' };
  if (upstream.declaresTasks) return { policy: { mode: upstream.taskSupport ?? 'forbidden' }, source: 'upstream' };
  return { policy: { mode: sources.fallback }, source: 'default' };
}

/** Whether server capabilities (an `initialize` result's) declare task-augmented `tools/call`. */
export function declaresToolTasks(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/**
 * `optedIn` is whether this very request declared it can handle a task (the SEP-2663
 * extension, or `params.task` on the 2025-11-25 wire).
 */
export function planCall(policy: ToolPolicy, optedIn: boolean, autoWindowMs: number): CallPlan {
  switch (policy.mode) {
    case 'forbidden':
      return { kind: 'sync' };
    case 'required':
      return optedIn ? { kind: 'task', windowMs: policy.syncWindowMs ?? autoWindowMs } : { kind: 'refuse', reason: 'task-required' };
    case 'optional':
      return optedIn ? { kind: 'task' } : { kind: 'sync' };
    case 'auto':
      return optedIn ? { kind: 'auto', windowMs: policy.syncWindowMs ?? autoWindowMs } : { kind: 'sync' };
  }
}
