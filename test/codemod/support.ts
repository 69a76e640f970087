import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runCodemod, type CodemodOptions } from '../../codemods/run.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FIXTURES = join(ROOT, 'test/fixtures/codemod');
export const CLIENT_ENTRY = join(ROOT, 'packages/client/src/index.ts');

/** Every file under `dir`, relative, sorted. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

export function snapshot(dir: string): Map<string, Buffer> {
  return new Map(listFiles(dir).map((f) => [f, readFileSync(join(dir, f))]));
}

export function tempCopy(dir: string, prefix = 'codemod-fixture-'): string {
  const target = mkdtempSync(join(tmpdir(), prefix));
  cpSync(dir, target, { recursive: true });
  return target;
}

export interface FixtureCase {
  transform: string;
  name: string;
  dir: string;
  input: string;
  /** undefined: the case expects the input to stay byte-identical. */
  output: string | undefined;
  config: { transforms?: string[]; noTodos?: boolean };
}

export function fixtureCases(): FixtureCase[] {
  const cases: FixtureCase[] = [];
  for (const transform of readdirSync(FIXTURES).sort()) {
    const tdir = join(FIXTURES, transform);
    if (!statSync(tdir).isDirectory()) continue;
    for (const name of readdirSync(tdir).sort()) {
      const dir = join(tdir, name);
      if (!existsSync(join(dir, 'input'))) continue;
      const configPath = join(dir, 'case.json');
      cases.push({
        transform,
        name,
        dir,
        input: join(dir, 'input'),
        output: existsSync(join(dir, 'output')) ? join(dir, 'output') : undefined,
        config: existsSync(configPath) ? (JSON.parse(readFileSync(configPath, 'utf8')) as FixtureCase['config']) : {},
      });
    }
  }
  return cases;
}

/**
 * Type-checks TypeScript files the way a user's project would, with `mcp-tasks-shim/client`
 * mapped to the client helper's source. Returns the diagnostics of those files only.
 */
export function typeCheck(files: string[]): Map<string, string[]> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    jsx: ts.JsxEmit.Preserve,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    baseUrl: ROOT,
    paths: { 'mcp-tasks-shim/client': [CLIENT_ENTRY] },
  };
  const program = ts.createProgram(files, options);
  const byFile = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const file of files) {
    const sf = program.getSourceFile(file);
    if (!sf) {
      byFile.get(file)!.push('not part of the program');
      continue;
    }
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      const where = d.start !== undefined ? sf.getLineAndCharacterOfPosition(d.start) : undefined;
      byFile.get(file)!.push(`${where ? `${where.line + 1}:${where.character + 1} ` : ''}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
  }
  return byFile;
}

/**
 * A temporary repo holding `files`, under `prefix`; with `nodeModules`, this repository's
 * node_modules (the SDK, Prettier) is linked into it. The caller removes it.
 */
export function tempRepo(prefix: string, files: Record<string, string>, options: { nodeModules: boolean }): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (options.nodeModules) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Runs the codemod on `dir` (forced), collecting what it writes to stderr. */
export async function runCollecting(dir: string, extra: Partial<CodemodOptions> = {}) {
  const stderr: string[] = [];
  const result = await runCodemod({ path: dir, force: true, stdout: () => {}, stderr: (t) => void stderr.push(t), ...extra });
  return { ...result, stderr: stderr.join('') };
}
