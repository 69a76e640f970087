import { isFileErrorCode, MARKERS, type FileErrorCode, type MarkerCode } from './markers.js';
import type { SiteKind } from './site-kinds.js';

/** What the codemod did at a site: rewrote it, marked it for a person, or skipped the whole file. */
export type SiteAction = 'rewritten' | 'marked' | 'skipped';

/** One row of the JSON report: a site rewritten, a marker left in the code, or a file that could not be processed. */
export interface ReportRow {
  file: string;
  line: number;
  column: number;
  transform: string;
  code: MarkerCode | FileErrorCode | 'rewritten';
  /** What the site is (`file` for a file or tsconfig that could not be processed). */
  kind: SiteKind | 'file';
  action: SiteAction;
  /** Why the site was not rewritten (marked, skipped), or what proved it (rewritten). */
  reason: string;
  message: string;
}

/** A report row from what a file run recorded. */
export function reportRow(file: string, row: { line: number; column: number; transform: string; code: ReportRow['code']; kind?: SiteKind; message: string }): ReportRow {
  if (row.code === 'rewritten') return { file, ...row, kind: row.kind ?? 'experimental-call', action: 'rewritten', reason: `proven old-API code of an SDK client, rewritten by ${row.transform}` };
  if (isFileErrorCode(row.code)) return { file, ...row, kind: 'file', action: 'skipped', reason: row.message };
  return { file, ...row, kind: row.kind ?? 'method-reference', action: 'marked', reason: MARKERS[row.code].why };
}

export interface FileOutcome {
  /** Relative to the run's root (the path itself when the root is a file). */
  file: string;
  status: 'unchanged' | 'changed' | 'error';
  /** Rewrites per transform. */
  rewrites: Record<string, number>;
  rows: ReportRow[];
}

export interface RunSummary {
  root: string;
  dryRun: boolean;
  transforms: string[];
  filesScanned: number;
  filesMatched: number;
  filesParsed: number;
  filesChanged: number;
  filesWithErrors: number;
  /** Files whose receivers the type checker classified (a tsconfig.json governs them, no --no-types). */
  filesTyped: number;
  /** Whether the repo's Prettier formatted the changed files (`ran on N changed files`, or `not run: <why>`). */
  prettier: string;
  symlinksSkipped: number;
  rewrites: Record<string, number>;
  markers: Record<string, number>;
  /** Old-API sites per kind and action. */
  sites: Record<string, Record<SiteAction, number>>;
  /** Rows a person must act on: marked sites and skipped files. */
  needPerson: number;
  elapsedMs: number;
}

/** Counts a row into the summary's per-kind and per-action figures. */
export function countSite(summary: RunSummary, row: ReportRow): void {
  const counts = (summary.sites[row.kind] ??= { rewritten: 0, marked: 0, skipped: 0 });
  counts[row.action]++;
  if (row.action !== 'rewritten') summary.needPerson++;
}

export interface CodemodReport {
  summary: RunSummary;
  rows: ReportRow[];
  changedFiles: string[];
}

export function summaryText(summary: RunSummary): string {
  const lines = [
    `codemod: ${summary.filesScanned} files scanned, ${summary.filesMatched} matched the prefilter, ${summary.filesParsed} parsed, ` +
      `${summary.filesChanged} ${summary.dryRun ? 'would change (dry run: nothing written)' : 'changed'}, ` +
      `${summary.filesWithErrors} skipped with errors, ${summary.filesTyped} analysed with types, in ${(summary.elapsedMs / 1000).toFixed(2)} s`,
  ];
  const rewrites = Object.entries(summary.rewrites).filter(([, n]) => n > 0);
  if (rewrites.length > 0) lines.push(`  rewrites: ${rewrites.map(([t, n]) => `${t} ${n}`).join(', ')}`);
  const markers = Object.entries(summary.markers).filter(([, n]) => n > 0);
  if (markers.length > 0) lines.push(`  markers:  ${markers.map(([c, n]) => `${c} ${n}`).join(', ')} (grep MCP-TASKS-MIGRATE)`);
  const total = (action: SiteAction): number => Object.values(summary.sites).reduce((n, c) => n + c[action], 0);
  const kinds = Object.entries(summary.sites).sort(([a], [b]) => a.localeCompare(b));
  if (kinds.length > 0) {
    lines.push(`  sites:    ${total('rewritten')} rewritten, ${total('marked')} marked, ${total('skipped')} files skipped`);
    for (const [kind, c] of kinds) lines.push(`    ${kind}: ${(['rewritten', 'marked', 'skipped'] as const).filter((a) => c[a] > 0).map((a) => `${c[a]} ${a}`).join(', ')}`);
  }
  lines.push(summary.needPerson === 0 ? '  nothing needs a person' : `  ${summary.needPerson} need${summary.needPerson === 1 ? 's' : ''} a person: see the report rows with action "marked" or "skipped" (grep -rn MCP-TASKS-MIGRATE)`);
  lines.push(`  prettier: ${summary.prettier}`);
  if (summary.symlinksSkipped > 0) lines.push(`  symlinks skipped (never followed): ${summary.symlinksSkipped}`);
  return `${lines.join('\n')}\n`;
}

export function rowText(row: ReportRow): string {
  return `${row.file}:${row.line}:${row.column}: ${row.code} (${row.transform}): ${row.message}`;
}
