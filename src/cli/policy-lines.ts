import type { PolicyRow, PolicyTable } from '../core/policy-table.js';

/** What the start-up lines say about the upstream and the policies: lines on stdout, warnings on stderr. */
export interface PolicyLines {
  /** What the upstream speaks. */
  upstream: string[];
  /** One row per tool: its policy, who runs its tasks, where the policy came from. */
  out: string[];
  warnings: string[];
}

function modeText(row: PolicyRow): string {
  return row.mode === 'auto' ? `auto (${row.syncWindowMs} ms window)` : row.mode;
}

function upstreamLines(report: NonNullable<PolicyTable['upstream']>): string[] {
  const how = report.pinned ? 'pinned' : 'discovered';
  if (report.problem) return [`  protocol: ${report.protocol} (${how}); ${report.problem}`];
  if (report.protocol === '2026-07-28') {
    return [`  protocol: 2026-07-28 (${how}), ${report.sep2663Tasks ? 'runs tool tasks itself (SEP-2663 tasks extension)' : 'no SEP-2663 tasks extension'}`];
  }
  return [`  protocol: ${report.protocol} (${how}), ${report.tasks ? 'runs tool tasks itself (capabilities.tasks)' : 'no capabilities.tasks'}`];
}

/** The same table the dashboard shows (`/dashboard/api/policies`), as text. */
export function policyLines(table: PolicyTable): PolicyLines {
  const upstream = table.upstreamDeclaresTasks
    ? 'the upstream declares tasks: its taskSupport applies where the policy file names no tool'
    : table.upstream?.sep2663Tasks
      ? `the upstream decides per call whether it makes a task; the policy file, else the default (${table.default}), decides when a client gets one`
      : `the upstream declares no tasks: the policy file, else the default (${table.default}), applies`;
  const out = [`  policies: ${table.tools.length} upstream tool${table.tools.length === 1 ? '' : 's'}; ${upstream}`];
  const nameWidth = Math.max(4, ...table.tools.map((r) => r.tool.length));
  const modeWidth = Math.max(6, ...table.tools.map((r) => modeText(r).length));
  const runsWidth = Math.max(9, ...table.tools.map((r) => (r.execution ?? '—').length));
  if (table.tools.length > 0) out.push(`    ${'tool'.padEnd(nameWidth)}  ${'policy'.padEnd(modeWidth)}  ${'execution'.padEnd(runsWidth)}  source`);
  for (const row of table.tools) {
    const said = row.source !== 'upstream' && row.upstreamTaskSupport ? ` (upstream says ${row.upstreamTaskSupport})` : '';
    out.push(`    ${row.tool.padEnd(nameWidth)}  ${modeText(row).padEnd(modeWidth)}  ${(row.execution ?? '—').padEnd(runsWidth)}  ${row.source}${said}`);
  }
  const warnings = table.unknownConfigured.length
    ? [`WARNING: the policy file names tools the upstream does not have: ${table.unknownConfigured.join(', ')}`]
    : [];
  return { upstream: table.upstream ? upstreamLines(table.upstream) : [], out, warnings };
}
