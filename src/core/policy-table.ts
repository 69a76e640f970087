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
  /** Who runs the tool's tasks: `native` (the upstream, the shim mirrors) or `shim` (a plain call run as the shim's task). */
  execution?: string;
}

/**
 * What the upstream speaks, as the upstream gateway learned it (src/upstream/discovery.ts,
 * `UpstreamReport`), and how it runs each tool's tasks. The core only passes it on.
 */
export interface UpstreamFacts {
  report: { protocol: string; pinned: boolean; tasks: boolean; sep2663Tasks: boolean; problem?: string };
  execution(tool: ToolInfo): string;
}

/** The start-up lines' and the dashboard's view of the policies (docs/configuration.md, "Policy file"). */
export interface PolicyTable {
  /** What the upstream speaks (absent where nobody asked it). */
  upstream?: UpstreamFacts['report'];
  upstreamDeclaresTasks: boolean;
  default: TaskPolicy;
  tools: PolicyRow[];
  /** Policy-file entries that name no upstream tool: a typo, or a tool the upstream dropped. */
  unknownConfigured: string[];
}

/** One row per upstream tool: its policy and where that came from, what the upstream says, who runs its tasks. */
export function policyTable(tools: readonly ToolInfo[], declaresTasks: boolean, sources: PolicySources, facts?: UpstreamFacts): PolicyTable {
  const rows = tools.map((tool): PolicyRow => {
    const taskSupport = tool.execution?.taskSupport;
    const { policy, source } = resolvePolicy(tool.name, sources, { declaresTasks, taskSupport });
    return {
      tool: tool.name,
      mode: policy.mode,
      source,
      ...(policy.mode === 'auto' ? { syncWindowMs: policy.syncWindowMs ?? sources.autoWindowMs } : {}),
      ...(taskSupport ? { upstreamTaskSupport: taskSupport } : {}),
      ...(facts ? { execution: facts.execution(tool) } : {}),
    };
  });
  const names = new Set(tools.map((t) => t.name));
  return {
    ...(facts ? { upstream: { ...facts.report } } : {}),
    upstreamDeclaresTasks: declaresTasks,
    default: sources.fallback,
    tools: rows,
    unknownConfigured: Object.keys(sources.configured).filter((name) => !names.has(name)),
  };
}
