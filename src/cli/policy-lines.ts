import type { PolicyRow, PolicyTable } from '../core/policy-table.js';

/** What the start-up lines say about the policies: a table on stdout, warnings on stderr. */
export interface PolicyLines {
  out: string[];
  warnings: string[];
}

function modeText(row: PolicyRow): string {
  return row.mode === 'auto' ? `auto (${row.syncWindowMs} ms window)` : row.mode;
}

export function policyLines(table: PolicyTable): PolicyLines {
  const upstream = table.upstreamDeclaresTasks
    ? 'the upstream declares tasks: its taskSupport applies where the policy file names no tool'
    : `the upstream declares no tasks: the policy file, else the default (${table.default}), applies`;
  const out = [`  policies: ${table.tools.length} upstream tool${table.tools.length === 1 ? '' : 's'}; ${upstream}`];
  const nameWidth = Math.max(4, ...table.tools.map((r) => r.tool.length));
  const modeWidth = Math.max(6, ...table.tools.map((r) => modeText(r).length));
  if (table.tools.length > 0) out.push(`    ${'tool'.padEnd(nameWidth)}  ${'policy'.padEnd(modeWidth)}  source`);
  for (const row of table.tools) {
    const said = row.source !== 'upstream' && row.upstreamTaskSupport ? ` (upstream says ${row.upstreamTaskSupport})` : '';
    out.push(`    ${row.tool.padEnd(nameWidth)}  ${modeText(row).padEnd(modeWidth)}  ${row.source}${said}`);
  }
  const warnings = table.unknownConfigured.length
    ? [`WARNING: the policy file names tools the upstream does not have: ${table.unknownConfigured.join(', ')}`]
    : [];
  return { out, warnings };
}
