import { join } from 'node:path';
import ts from 'typescript';
import { CLIENT_ENTRY, ROOT } from './support.js';

/**
 * tsc before and after the codemod, per file: what a corpus test compares to prove that the
 * rewrites add no type error under the corpus's own tsconfig.json.
 */
export interface Diagnostic {
  /** `TSnnnn: message`, without a position (a rewrite moves lines). */
  text: string;
  /** First and last line of the statement (of a block or the file) that holds the error. */
  statement: [number, number];
}

/** Diagnostics per file, with the helper resolvable as an installed app would resolve it. */
export function diagnostics(dir: string): Map<string, Diagnostic[]> {
  const configPath = join(dir, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dir);
  const options: ts.CompilerOptions = { ...parsed.options, baseUrl: ROOT, paths: { 'mcp-tasks-shim/client': [CLIENT_ENTRY] }, typeRoots: [join(ROOT, 'node_modules/@types')] };
  const program = ts.createProgram(parsed.fileNames, options);
  const byFile = new Map<string, Diagnostic[]>();
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(dir)) continue;
    const list = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)].map((d) => ({
      text: `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      statement: statementLines(sf, d.start ?? 0),
    }));
    byFile.set(sf.fileName.slice(dir.length + 1), list);
  }
  return byFile;
}

function statementLines(sf: ts.SourceFile, position: number): [number, number] {
  let found: ts.Node = sf;
  const visit = (node: ts.Node): void => {
    if (position < node.getStart(sf) || position >= node.getEnd()) return;
    if (ts.isBlock(node.parent) || ts.isSourceFile(node.parent)) found = node;
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sf, visit);
  const line = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  return [line(found.getStart(sf)), line(found.getEnd())];
}

/** Errors in `after` that `before` does not have (compared as a multiset of texts per file). */
export function newErrors(before: Map<string, Diagnostic[]>, after: Map<string, Diagnostic[]>): Array<Diagnostic & { file: string }> {
  const added: Array<Diagnostic & { file: string }> = [];
  for (const [file, list] of after) {
    const pool = (before.get(file) ?? []).map((d) => d.text);
    for (const error of list) {
      const i = pool.indexOf(error.text);
      if (i === -1) added.push({ file, ...error });
      else pool.splice(i, 1);
    }
  }
  return added;
}

