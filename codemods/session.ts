import { ts, type Project, type SourceFile } from 'ts-morph';
import { applyEdits, mapOffset, sortEdits, type Edit } from './edits.js';
import { importReferenceCounts } from './import-planner.js';
import type { MarkerCode } from './markers.js';
import type { SiteKind } from './site-kinds.js';
import { matchRawRequest, resolveClient } from './mcp-calls.js';
import { McpResolver } from './mcp-imports.js';
import { PassContext } from './pass-context.js';
import { callsNamed } from './raw.js';
import type { TypedFileFacts } from './receiver-kind.js';
import { scriptKindOf, type ReexportIndex } from './reexports.js';
import type { FileRunOptions, PendingRow } from './file-run-options.js';
import { closeEnvelope, lineColumn, openEnvelope } from './text.js';
import type { FileFacts, Transform } from './transforms/types.js';

/** How many times one transform may run on one file before the file counts as broken (a transform that never settles). */
const MAX_ROUNDS = 8;

export interface FileRow {
  line: number;
  column: number;
  transform: string;
  code: MarkerCode | 'rewritten' | 'parse-error' | 'transform-error';
  /** The kind of old-API site (rewritten and marked rows). */
  kind?: SiteKind;
  message: string;
}

export interface FileResult {
  output: string;
  parsed: boolean;
  rows: FileRow[];
  rewrites: Record<string, number>;
  failed: boolean;
}

/** Parse diagnostics of a file (syntax only: no program, no type checker). */
export function syntaxErrors(sf: SourceFile): ts.DiagnosticWithLocation[] {
  return (sf.compilerNode as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

/**
 * Runs the transforms on one file's text, all in memory. Either every transform succeeds and the
 * result is the new text, or the file is left as it was and one error row says why.
 */
export function runFile(project: Project, path: string, raw: string, options: FileRunOptions, typed?: TypedFileFacts): FileResult {
  const envelope = openEnvelope(raw);
  let text = envelope.text;
  let sf = project.createSourceFile(path, text, { overwrite: true, scriptKind: scriptKindOf(path) });
  const rewrites: Record<string, number> = {};
  const rounds: Edit[][] = [];
  const pending: PendingRow[] = [];
  let current = 'parser';
  try {
    const errors = syntaxErrors(sf);
    if (errors.length > 0) {
      const first = errors[0]!;
      const where = lineColumn(text, first.start ?? 0);
      return { output: raw, parsed: false, failed: true, rewrites, rows: [{ ...where, transform: 'parser', code: 'parse-error', message: `does not parse (${ts.flattenDiagnosticMessageText(first.messageText, ' ').replace(/\.$/, '')}); skipped` }] };
    }
    const facts = computeFacts(sf, path, options.reexports, typed);
    const currentOffset = (offset: number, round: number): number => {
      for (let r = round; r < rounds.length; r++) offset = mapOffset(offset, rounds[r]!);
      return offset;
    };
    const reparse = (next: string): void => {
      project.removeSourceFile(sf);
      text = next;
      sf = project.createSourceFile(path, text, { overwrite: true, scriptKind: scriptKindOf(path) });
    };
    const runPhase = (phase: readonly Transform[]): void => {
      for (let round = 0; ; round++) {
        const active = phase.filter((t) => t.triggers.some((trigger) => text.includes(trigger)));
        if (active.length === 0) return;
        if (round >= MAX_ROUNDS) throw new Error(`${active.map((t) => t.name).join(', ')} did not settle after ${MAX_ROUNDS} rounds`);
        const ctx = new PassContext(sf, text, path, options, facts, rounds.length, pending, rewrites, () => pending.map((row) => currentOffset(row.offset, row.round)));
        for (const transform of active) {
          current = transform.name;
          ctx.transform = transform.name;
          transform.run(ctx);
        }
        current = active.map((t) => t.name).join(', ');
        const edits = ctx.finish();
        if (edits.length === 0) return;
        const next = applyEdits(text, edits);
        rounds.push(sortEdits(edits));
        if (next === text) return;
        reparse(next);
        const broken = syntaxErrors(sf)[0];
        if (broken) throw new Error(`it produced code that does not parse (${ts.flattenDiagnosticMessageText(broken.messageText, ' ')} at ${JSON.stringify(lineColumn(text, broken.start ?? 0))})`);
        if (!ctx.deferred) return;
      }
    };
    for (const phase of phases(options.transforms)) runPhase(phase);
    if (text !== envelope.text) runPhase(options.finishing);
    current = 'output check';
    if (text !== envelope.text && syntaxErrors(sf).length > 0) {
      const first = syntaxErrors(sf)[0]!;
      throw new Error(`the rewritten file does not parse (${ts.flattenDiagnosticMessageText(first.messageText, ' ')} at ${JSON.stringify(lineColumn(text, first.start ?? 0))})`);
    }
    const rows = new Map<string, FileRow>();
    for (const row of pending) {
      const where = lineColumn(text, currentOffset(row.offset, row.round));
      const key = `${where.line}:${where.column}:${row.code}:${row.transform}`;
      if (!rows.has(key)) rows.set(key, { ...where, transform: row.transform, code: row.code, kind: row.kind, message: row.message });
    }
    const sorted = [...rows.values()].sort((a, b) => a.line - b.line || a.column - b.column);
    return { output: text === envelope.text ? raw : closeEnvelope(envelope, text), parsed: true, failed: false, rewrites, rows: sorted };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      output: raw,
      parsed: true,
      failed: true,
      rewrites: {},
      rows: [{ line: 1, column: 1, transform: current, code: 'transform-error', message: `${current} failed, file left untouched: ${message}` }],
    };
  } finally {
    project.removeSourceFile(sf);
  }
}

/** Transforms grouped by phase, in phase order, each group in registry order. */
function phases(transforms: readonly Transform[]): Transform[][] {
  const byPhase = new Map<number, Transform[]>();
  for (const t of transforms) byPhase.set(t.phase, [...(byPhase.get(t.phase) ?? []), t]);
  return [...byPhase.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
}

function computeFacts(sf: SourceFile, path: string, reexports: ReexportIndex, typed: TypedFileFacts | undefined): FileFacts {
  const mcp = new McpResolver(sf, path, reexports);
  mcp.receiverKinds = typed?.receivers;
  mcp.methodValues = typed?.methods;
  const hasMcpImport = mcp.hasMcpImport();
  let usesDialect = false;
  if (hasMcpImport && /tasks\/(create|status)/.test(sf.getFullText())) {
    usesDialect = callsNamed(sf, new Set(['request'])).some((call) => {
      const raw = matchRawRequest(call, mcp.methodValues);
      return raw !== undefined && (raw.method === 'tasks/create' || raw.method === 'tasks/status') && resolveClient(raw.receiver, mcp).kind !== 'unknown';
    });
  }
  return { hasMcpImport, usesDialect, importRefsBefore: importReferenceCounts(sf, mcp), typed };
}

