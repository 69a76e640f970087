import { resolvePolicy, type PolicySource, type PolicySources, type TaskPolicy, type UpstreamTaskSupport } from './policy.js';
import type { ToolInfo } from './ports.js';

/** One upstream tool's effective policy and where it came from. */
export interface PolicyRow {
  tool: string;
  mode: TaskPolicy;
  source: PolicySource;
  /** `auto` only: the synchronous window this tool gets. */
  syncWindowMs?: number;
  /** What the upstream's `tools/list` says, whether or not it decided the policy. */
  upstreamTaskSupport?: UpstreamTaskSupport;
}

/** The start-up lines' and the dashboard's view of the policies (docs/configuration.md, "Policy file"). */
export interface PolicyTable {
  upstreamDeclaresTasks: boolean;
  default: TaskPolicy;
  tools: PolicyRow[];
  /** Policy-file entries that name no upstream tool: a typo, or a tool the upstream dropped. */
  unknownConfigured: string[];
}

export function policyTable(tools: readonly ToolInfo[], declaresTasks: boolean, sources: PolicySources): PolicyTable {
  const rows = tools.map((tool): PolicyRow => {
    const taskSupport = tool.execution?.taskSupport;
    const { policy, source } = resolvePolicy(tool.name, sources, { declaresTasks, taskSupport });
    return {
      tool: tool.name,
      mode: policy.mode,
      source,
      ...(policy.mode === 'auto' ? { syncWindowMs: policy.syncWindowMs ?? sources.autoWindowMs } : {}),
      ...(taskSupport ? { upstreamTaskSupport: taskSupport } : {}),
    };
  });
  const names = new Set(tools.map((t) => t.name));
  return {
    upstreamDeclaresTasks: declaresTasks,
    default: sources.fallback,
    tools: rows,
    unknownConfigured: Object.keys(sources.configured).filter((name) => !names.has(name)),
  };
}
