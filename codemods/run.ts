import { lstatSync, readFileSync, renameSync, statSync, writeFileSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Project, ts } from 'ts-morph';
import { unifiedDiff } from './diff.js';
import { discoverFiles } from './discover.js';
import { gitState } from './git.js';
import { describePrettier, runPrettier } from './prettier.js';
import { ReexportIndex } from './reexports.js';
import { FINISHING, selectTransforms } from './registry.js';
import { countSite, reportRow, type CodemodReport, type FileOutcome, type ReportRow, type RunSummary } from './report.js';
import { runFile } from './session.js';
import type { TypedFileFacts } from './receiver-kind.js';
import type { Transform } from './transforms/types.js';
import { TsConfigs, typedFacts, type TsConfig } from './type-project.js';

export interface CodemodOptions {
  /** A directory or one file. */
  path: string;
  dryRun?: boolean;
  /** Transform names; all when absent. */
  transforms?: readonly string[];
  noTodos?: boolean;
  /** Run on a dirty git tree. */
  force?: boolean;
  /** Never ask the type checker, even where a tsconfig.json governs the files (the syntactic analysis only). */
  noTypes?: boolean;
  /** Files per ts-morph Project (memory stays flat whatever the repo size). */
  chunkSize?: number;
  /** Where diffs, progress and the summary go. */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

export interface CodemodResult {
  report: CodemodReport;
  /** 0: done; 1: done, but some files could not be processed (see the report). */
  exitCode: 0 | 1;
}

/** A problem with the input as a whole: nothing was read or written. */
export class CodemodInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodemodInputError';
  }
}

const DEFAULT_CHUNK = 200;
/** Larger files are generated or bundled code, not something to migrate: skipped with a report row. */
export const MAX_FILE_BYTES = 1024 * 1024;

export async function runCodemod(options: CodemodOptions): Promise<CodemodResult> {
  const started = performance.now();
  const out = options.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = options.stderr ?? ((t: string) => void process.stderr.write(t));
  const root = resolve(options.path);
  let rootStat;
  try {
    rootStat = lstatSync(root);
  } catch {
    throw new CodemodInputError(`${options.path}: no such file or directory`);
  }
  if (rootStat.isSymbolicLink()) throw new CodemodInputError(`${options.path} is a symbolic link; the codemod never follows symlinks: pass the real path`);
  const transforms = selectTransforms(options.transforms);
  if (!options.dryRun && !options.force) {
    const git = gitState(root);
    if (git.repo && git.dirty.length > 0) {
      const listed = git.dirty.slice(0, 10).map((line) => `  ${line}`).join('\n');
      throw new CodemodInputError(
        `refusing to rewrite a dirty git tree (${git.dirty.length} uncommitted change${git.dirty.length === 1 ? '' : 's'} under ${options.path}):\n${listed}\ncommit or stash first, preview with --dry-run, or pass --force`,
      );
    }
  }

  const { files, symlinks } = discoverFiles(root);
  const symlinksSkipped = symlinks.length;
  const base = rootStat.isDirectory() ? root : dirname(root);
  const rel = (file: string): string => relative(base, file) || basename(file);
  const triggers = [...new Set(transforms.flatMap((t) => t.triggers))].map((t) => Buffer.from(t));
  const reexports = new ReexportIndex();
  const summary: RunSummary = {
    root: options.path,
    dryRun: options.dryRun ?? false,
    transforms: transforms.map((t) => t.name),
    filesScanned: files.length,
    filesMatched: 0,
    filesParsed: 0,
    filesChanged: 0,
    filesWithErrors: 0,
    filesTyped: 0,
    prettier: 'not run: dry run',
    symlinksSkipped,
    rewrites: {},
    markers: {},
    sites: {},
    needPerson: 0,
    elapsedMs: 0,
  };
  const rows: ReportRow[] = [];
  const changedFiles: string[] = [];

  const record = (outcome: FileOutcome): void => {
    rows.push(...outcome.rows);
    for (const [t, n] of Object.entries(outcome.rewrites)) summary.rewrites[t] = (summary.rewrites[t] ?? 0) + n;
    for (const row of outcome.rows) {
      countSite(summary, row);
      if (row.action === 'marked') summary.markers[row.code] = (summary.markers[row.code] ?? 0) + 1;
    }
    if (outcome.status === 'changed') {
      summary.filesChanged++;
      changedFiles.push(outcome.file);
    }
    if (outcome.status === 'error') summary.filesWithErrors++;
  };

  for (const link of symlinks) {
    const where = link.outside ? 'it points outside the tree' : 'symlinks are never followed';
    const row = reportRow(rel(link.path), { line: 1, column: 1, transform: '-', code: 'symlink-skipped', message: `symbolic link skipped (${where})` });
    rows.push(row);
    countSite(summary, row);
  }

  const tsconfigs = options.noTypes ? undefined : new TsConfigs();
  const reportedConfigs = new Set<string>();
  /** The compiler options for a file, or undefined for the syntactic analysis (no tsconfig, a broken one, --no-types). */
  const typesFor = (file: string): TsConfig | undefined => {
    const path = tsconfigs?.nearest(file);
    if (!path) return undefined;
    const config = tsconfigs!.load(path);
    if (config.error !== undefined && !reportedConfigs.has(path)) {
      reportedConfigs.add(path);
      const message = `broken tsconfig (${config.error}); the files under it are analysed without types`;
      const row = reportRow(relative(base, path) || basename(path), { line: 1, column: 1, transform: '-', code: 'tsconfig-error', message });
      rows.push(row);
      countSite(summary, row);
      err(`mcp-tasks-shim codemod: ${relative(base, path) || basename(path)}: ${message}\n`);
    }
    return config;
  };

  // One chunk per tsconfig: a chunk's files share one program when they are analysed with types.
  const chunks = new Map<string, Array<{ path: string; raw: string }>>();
  const flush = (key: string): void => {
    const chunk = chunks.get(key);
    chunks.delete(key);
    if (!chunk || chunk.length === 0) return;
    const config = key === '' || !tsconfigs ? undefined : tsconfigs.load(key);
    processChunk(chunk, transforms, { ...options, reexports }, config?.options, rel, out, err, (o, parsed, typed) => {
      if (parsed) summary.filesParsed++;
      if (typed) summary.filesTyped++;
      record(o);
    });
  };

  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      record(errorOutcome(rel(file), 'read-error', `cannot read: ${(e as Error).message}`));
      continue;
    }
    if (!triggers.some((t) => bytes.includes(t))) continue;
    summary.filesMatched++;
    if (bytes.length > MAX_FILE_BYTES) {
      const message = `${(bytes.length / 1024 / 1024).toFixed(1)} MB: over the 1 MB limit (generated or bundled code?); skipped`;
      err(`mcp-tasks-shim codemod: ${rel(file)}: ${message}\n`);
      record({ file: rel(file), status: 'error', rewrites: {}, rows: [reportRow(rel(file), { line: 1, column: 1, transform: '-', code: 'too-large', message })] });
      continue;
    }
    let raw: string;
    try {
      raw = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); // keeps a BOM, so it is written back
    } catch {
      record(errorOutcome(rel(file), 'read-error', 'not UTF-8; skipped'));
      continue;
    }
    const config = typesFor(file);
    const key = config?.options ? config.path : '';
    const chunk = chunks.get(key) ?? [];
    chunks.set(key, chunk);
    chunk.push({ path: file, raw });
    if (chunk.length >= (options.chunkSize ?? DEFAULT_CHUNK)) flush(key);
  }
  for (const key of [...chunks.keys()]) flush(key);

  if (!options.dryRun) {
    const outcome = runPrettier(rootStat.isDirectory() ? root : dirname(root), changedFiles.map((f) => join(base, f)));
    summary.prettier = describePrettier(outcome);
    if (outcome.kind === 'failed') err(`mcp-tasks-shim codemod: prettier ${summary.prettier}\n`);
  }
  summary.elapsedMs = Math.round(performance.now() - started);
  rows.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  return { report: { summary, rows, changedFiles }, exitCode: summary.filesWithErrors > 0 ? 1 : 0 };
}

function errorOutcome(file: string, code: 'read-error' | 'write-error', message: string): FileOutcome {
  return { file, status: 'error', rewrites: {}, rows: [reportRow(file, { line: 1, column: 1, transform: '-', code, message })] };
}

function processChunk(
  chunk: Array<{ path: string; raw: string }>,
  transforms: readonly Transform[],
  options: CodemodOptions & { reexports: ReexportIndex },
  compilerOptions: ts.CompilerOptions | undefined,
  rel: (file: string) => string,
  out: (t: string) => void,
  err: (t: string) => void,
  done: (outcome: FileOutcome, parsed: boolean, typed: boolean) => void,
): void {
  let typed: Map<string, TypedFileFacts> | undefined;
  if (compilerOptions) {
    try {
      typed = typedFacts(chunk, compilerOptions);
    } catch (e) {
      err(`mcp-tasks-shim codemod: the type checker failed on ${chunk.length} file(s) (${(e as Error).message}); they are analysed without types\n`);
    }
  }
  // A fresh project per chunk: nothing of an earlier chunk stays reachable.
  const project = new Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    compilerOptions: { allowJs: true, jsx: ts.JsxEmit.Preserve, target: ts.ScriptTarget.ESNext },
  });
  for (const { path, raw } of chunk) {
    const file = rel(path);
    const kinds = typed?.get(path);
    const result = runFile(project, path, raw, { transforms, finishing: FINISHING, noTodos: options.noTodos ?? false, reexports: options.reexports }, kinds);
    const isTyped = kinds !== undefined;
    const rows: ReportRow[] = result.rows.map((r) => reportRow(file, r));
    for (const row of rows) if (row.code === 'parse-error' || row.code === 'transform-error') err(`mcp-tasks-shim codemod: ${file}:${row.line}:${row.column}: ${row.message}\n`);
    if (result.failed) {
      done({ file, status: 'error', rewrites: {}, rows }, result.parsed, isTyped);
      continue;
    }
    if (result.output === raw) {
      done({ file, status: 'unchanged', rewrites: result.rewrites, rows }, true, isTyped);
      continue;
    }
    if (options.dryRun) {
      out(unifiedDiff(raw, result.output, `a/${file}`, `b/${file}`));
    } else {
      try {
        writeAtomically(path, result.output);
        out(`rewrote ${file}\n`);
      } catch (e) {
        const row = reportRow(file, { line: 1, column: 1, transform: '-', code: 'write-error', message: `cannot write: ${(e as Error).message}` });
        err(`mcp-tasks-shim codemod: ${file}: ${row.message}\n`);
        done({ file, status: 'error', rewrites: {}, rows: [...rows, row] }, true, isTyped);
        continue;
      }
    }
    done({ file, status: 'changed', rewrites: result.rewrites, rows }, true, isTyped);
  }
}

/** Write beside the file, then rename over it: a crash leaves the old file or the new one, never half. */
function writeAtomically(path: string, text: string): void {
  const mode = statSync(path).mode & 0o7777;
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.codemod-tmp`);
  try {
    writeFileSync(tmp, text, { mode });
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to clean up
    }
    throw e;
  }
}
