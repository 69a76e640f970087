import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCodemod } from '../../codemods/index.js';
import type { CodemodReport, ReportRow } from '../../codemods/report.js';
import { listFiles, ROOT } from './support.js';
import { diagnostics, newErrors, type Diagnostic } from './tsc-diff.js';

/**
 * The shapes client code takes outside the SDK's examples (method constants, wrappers, clients
 * held by other objects, client-hosted tasks, hand-written wire types, look-alikes), each site
 * annotated by hand in the set's sites.json, run with the set's strict tsconfig.json.
 */
const SET = join(ROOT, 'test/fixtures/codemod-wild');

interface Site {
  file: string;
  text: string;
  kind: string;
  expect: 'rewritten' | 'marked';
  shape: string;
}
interface Sites {
  sites: Site[];
  lookAlikes: Array<{ file: string; text: string; shape: string }>;
}

const annotated = JSON.parse(readFileSync(join(SET, 'sites.json'), 'utf8')) as Sites;

/** First and last line of the statement (or class member) holding `offset`. */
function statementAt(file: string, text: string, offset: number): [number, number] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let found: ts.Node = sf;
  const visit = (node: ts.Node): void => {
    if (offset < node.getStart(sf) || offset >= node.getEnd()) return;
    if (ts.isBlock(node.parent) || ts.isSourceFile(node.parent) || ts.isClassDeclaration(node.parent)) found = node;
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sf, visit);
  const line = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  return [line(found.getStart(sf)), line(found.getEnd())];
}

describe('the codemod on the wild-shapes corpus (sites annotated by hand)', () => {
  let work: string;
  let dir: string;
  let report: CodemodReport;
  let errorsBefore: Map<string, Diagnostic[]>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'codemod-wild-'));
    dir = join(work, 'set');
    cpSync(SET, dir, { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
    errorsBefore = diagnostics(dir);
    ({ report } = await runCodemod({ path: dir, force: true, stdout: () => {}, stderr: () => {} }));
  }, 300_000);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  const output = (file: string): string => readFileSync(join(dir, file), 'utf8');
  const input = (file: string): string => readFileSync(join(SET, file), 'utf8');
  const rowsIn = (file: string, from: number, to: number, action: ReportRow['action']): ReportRow[] =>
    report.rows.filter((r) => r.file === file && r.action === action && r.line >= from && r.line <= to);

  it('annotates each site by a text found once in its file', () => {
    for (const s of [...annotated.sites, ...annotated.lookAlikes]) expect(input(s.file).split(s.text).length - 1, `${s.file}: ${s.text}`).toBe(1);
  });

  it('leaves no site silent: each is rewritten or has a marker and a report row, as annotated', () => {
    const outcome = annotated.sites.map((s) => {
      const after = output(s.file);
      const at = after.indexOf(s.text);
      if (at === -1) return { ...s, got: report.rows.some((r) => r.file === s.file && r.action === 'rewritten') ? 'rewritten' : 'silent' };
      const [from, to] = statementAt(s.file, after, at);
      const marked = rowsIn(s.file, from, to, 'marked').length > 0 && /MCP-TASKS-MIGRATE\(/.test(after.split('\n').slice(Math.max(0, from - 3), to).join('\n'));
      return { ...s, got: marked ? 'marked' : 'silent' };
    });
    expect(outcome.filter((s) => s.got === 'silent').map((s) => `${s.file}: ${s.text}`)).toEqual([]);
    expect(outcome.filter((s) => s.got !== s.expect).map((s) => `${s.file}: ${s.text} (${s.shape}): ${s.got}, annotated ${s.expect}`)).toEqual([]);
    const rewritten = outcome.filter((s) => s.got === 'rewritten').length;
    // The figure docs/codemod.md quotes.
    console.info(`wild-shapes corpus: ${rewritten} of ${outcome.length} sites rewritten (${((100 * rewritten) / outcome.length).toFixed(1)} %), ${outcome.length - rewritten} marked, 0 silent`);
  });

  it('reports each site with its kind, action and reason', () => {
    for (const row of report.rows) expect(row.reason.length, `${row.file}:${row.line}`).toBeGreaterThan(10);
    for (const s of annotated.sites.filter((x) => x.expect === 'marked')) {
      expect(report.rows.some((r) => r.file === s.file && r.kind === s.kind && r.action === 'marked'), `${s.file}: ${s.kind}`).toBe(true);
    }
    expect(report.summary.needPerson).toBe(report.rows.filter((r) => r.action !== 'rewritten').length);
  });

  it('leaves look-alikes byte-identical and unmarked', () => {
    for (const look of annotated.lookAlikes) {
      const before = input(look.file).split('\n');
      const after = output(look.file).split('\n');
      const line = before.findIndex((l) => l.includes(look.text));
      expect(after[line], `${look.file}: ${look.shape}`).toBe(before[line]);
      expect(after[line - 1] ?? '', look.shape).not.toContain('MCP-TASKS-MIGRATE');
      expect(report.rows.filter((r) => r.file === look.file && r.line === line + 1), look.shape).toEqual([]);
    }
    expect(output('src/config.ts')).toBe(input('src/config.ts'));
  });

  it('adds no type error under the set’s strict tsconfig.json', () => {
    const added = newErrors(errorsBefore, diagnostics(dir));
    expect(added.map((e) => `${e.file}:${e.statement[0]} ${e.text}`)).toEqual([]);
    expect(listFiles(dir).filter((f) => f.endsWith('.ts')).length).toBeGreaterThan(5);
  }, 300_000);

  it('changes nothing when run a second time', async () => {
    const second = await runCodemod({ path: dir, force: true, stdout: () => {}, stderr: () => {} });
    expect(second.report.summary.filesChanged).toBe(0);
  }, 300_000);
});
