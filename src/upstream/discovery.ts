import type { ToolInfo } from '../core/ports.js';
import { DiscoverResult } from '../wire/sep2663/result-schemas.js';
import type { Sep2663UpstreamClient } from './client/sep2663-client.js';

/** `--upstream-protocol`: what the shim assumes the upstream speaks; `auto` asks it. */
export const UPSTREAM_PROTOCOLS = ['auto', '2025-11-25', '2026-07-28'] as const;
export type UpstreamProtocolSetting = (typeof UPSTREAM_PROTOCOLS)[number];

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What the upstream was found (or pinned) to speak; the start-up lines print it. */
export interface UpstreamReport {
  protocol: '2025-11-25' | '2026-07-28' | 'unknown';
  /** Set by `--upstream-protocol`, not learned. */
  pinned: boolean;
  /** 2025-11-25: the upstream declared `capabilities.tasks.requests.tools.call`. */
  tasks: boolean;
  /** 2026-07-28: `server/discover` listed the SEP-2663 tasks extension. */
  sep2663Tasks: boolean;
  /** Why a part could not be learned, e.g. the upstream was not reachable. */
  problem?: string;
}

/** How the shim runs a tool's tasks. */
export type ExecutionMode = 'native' | 'sep2663' | 'shim';

/**
 * `sep2663` for every tool of a 2026-07-28 upstream that lists the tasks extension (the upstream
 * decides per call whether it answers plainly or with a task); `native` when a 2025-11-25 upstream
 * runs the tool's tasks itself (it declares tasks for tools/call and the tool's taskSupport is
 * required or optional); otherwise the shim runs a plain call as its own task.
 */
export function executionMode(report: UpstreamReport, tool: ToolInfo | undefined): ExecutionMode {
  if (report.protocol === '2026-07-28' && report.sep2663Tasks) return 'sep2663';
  if (report.protocol !== '2025-11-25' || !report.tasks) return 'shim';
  const support = tool?.execution?.taskSupport;
  return support === 'required' || support === 'optional' ? 'native' : 'shim';
}

/**
 * Asks the upstream `server/discover` (2026-07-28, stateless HTTP). Undefined when it does not
 * answer one: a 2025-era server refuses a request without a session.
 */
export async function probeServerDiscover(client: Sep2663UpstreamClient, timeoutMs: number): Promise<{ versions: string[]; tasksExtension: boolean } | undefined> {
  try {
    const result = await client.call('server/discover', {}, DiscoverResult, { capabilities: {}, timeoutMs });
    if (!result.supportedVersions.includes('2026-07-28')) return undefined;
    return { versions: result.supportedVersions, tasksExtension: result.capabilities.extensions?.[TASKS_EXTENSION] !== undefined };
  } catch {
    return undefined;
  }
}
