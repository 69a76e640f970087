import type { FileErrorCode, MarkerCode } from './markers.js';

/** One row of the JSON report: a marker left in the code, or a file that could not be processed. */
export interface ReportRow {
  file: string;
  line: number;
  column: number;
  transform: string;
  code: MarkerCode | FileErrorCode;
  message: string;
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
  elapsedMs: number;
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
  lines.push(`  prettier: ${summary.prettier}`);
  if (summary.symlinksSkipped > 0) lines.push(`  symlinks skipped (never followed): ${summary.symlinksSkipped}`);
  return `${lines.join('\n')}\n`;
}

export function rowText(row: ReportRow): string {
  return `${row.file}:${row.line}:${row.column}: ${row.code} (${row.transform}): ${row.message}`;
}
