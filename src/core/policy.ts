/**
 * Which tool calls become tasks. The policy per tool comes from configuration first, then
 * from the upstream's `execution.taskSupport`, then from the configured default.
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

export function resolvePolicy(
  tool: string,
  sources: PolicySources,
  upstreamSupport: UpstreamTaskSupport | undefined,
): ToolPolicy {
  return sources.configured[tool] ?? { mode: upstreamSupport ?? sources.fallback };
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
