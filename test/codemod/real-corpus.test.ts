import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_TABLE } from '../../src/mapping/methods.js';
import { runCodemod } from '../../codemods/index.js';
import type { CodemodReport } from '../../codemods/report.js';
import { listFiles, ROOT } from './support.js';
import { diagnostics, newErrors, type Diagnostic } from './tsc-diff.js';

/**
 * Real client files from public repositories (source and licence in each set's SOURCES.md), run
 * through the codemod with their own tsconfig.json, as a user would.
 */
const CORPUS = join(ROOT, 'test/fixtures/codemod-real');

interface CorpusSet {
  name: string;
  /** Files written for the fixture (stand-ins for modules the copied files import), not client code. */
  standIn?: RegExp;
  /** The set holds server code whose task calls must stay as they are. */
  hasServerCode: boolean;
  /** Old-API sites the patterns above cannot see: `text` is the start of the call. */
  extraSites?: Array<{ file: string; text: string; method: string }>;
}

const SETS: CorpusSet[] = [
  // src/ outside src/examples holds the stand-ins for the SDK's own modules.
  { name: 'typescript-sdk', standIn: /^src\/(?!examples\/)/, hasServerCode: true },
  { name: 'inspector', hasServerCode: false },
  {
    name: 'nimblebrain',
    hasServerCode: false,
    // A proxy of an iframe's tasks/get, tasks/result and tasks/cancel: the method is a parameter.
    extraSites: [{ file: 'web/src/bridge/bridge.ts', text: 'client.request({ method, params }, schema)', method: 'tasks/get' }],
  },
];

/** The method each experimental client call sends (the mapping table says what replaces it). */
const EXPERIMENTAL_METHOD: Record<string, string> = {
  callToolStream: 'tools/call',
  requestStream: 'tools/call',
  getTask: 'tasks/get',
  getTaskResult: 'tasks/result',
  cancelTask: 'tasks/cancel',
  listTasks: 'tasks/list',
};
/**
 * Methods nothing replaces (tasks/list): their sites can only be marked. tasks/result has no SEP-2663
 * method either, but the helper's waitForTask replaces the call, so its sites count as rewritable.
 */
const NO_EQUIVALENT = new Set(METHOD_TABLE.filter((row) => row.sep2663 === null && row.method !== 'tasks/result').map((row) => row.method));

interface Site {
  file: string;
  line: number;
  method: string;
  server: boolean;
  text: string;
}

/**
 * Old-API task call sites: `<receiver>.experimental.tasks.<m>(`, raw `request({ method: 'tasks/…' })`,
 * task-augmented `tools/call`, and the set's `extraSites` (requests whose method is a variable).
 * The servers of these files are all named `server`/`mcpServer` (checked by reading them).
 */
function sites(dir: string, set: CorpusSet): Site[] {
  const found: Site[] = [];
  for (const file of listFiles(dir).filter((f) => f.endsWith('.ts') && !set.standIn?.test(f))) {
    const text = readFileSync(join(dir, file), 'utf8');
    const lines = text.split('\n');
    const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
    const add = (index: number, receiver: string, method: string): void => {
      const line = lineOf(index);
      if (/^\s*(\/\/|\*)/.test(lines[line - 1]!)) return; // a comment (a marker's instruction names calls too)
      if (found.some((s) => s.file === file && s.line === line)) return;
      found.push({ file, line, method, server: /server$/i.test(receiver), text: lines[line - 1]! });
    };
    for (const m of text.matchAll(/([\w$]+)[!?]?\)?\.experimental\.tasks\.(\w+)\(/g)) {
      const method = EXPERIMENTAL_METHOD[m[2]!];
      if (method) add(m.index, m[1]!, method);
    }
    // Raw requests, also when the request object starts on the next line (Prettier's layout).
    for (const m of text.matchAll(/([\w$]+)\.request\(\s*\{\s*method:\s*['"](tasks\/\w+)['"]/g)) add(m.index, m[1]!, m[2]!);
    // Task-augmented tools/call: `task` in the params of the same statement.
    for (const m of text.matchAll(/([\w$]+)\.(?:request\(\s*\{\s*method(?::\s*['"]tools\/call['"])?,|callTool\()[^;]{0,600}?\btask:\s*[{\w]/g)) add(m.index, m[1]!, 'tools/call');
    for (const extra of set.extraSites ?? []) {
      if (extra.file !== file) continue;
      const index = text.indexOf(extra.text);
      expect(index, `${file}: ${extra.text}`).toBeGreaterThan(-1);
      add(index, 'client', extra.method);
    }
  }
  return found;
}

interface SetRun {
  before: Site[];
  after: Site[];
}

/** Sites with a SEP-2663 equivalent, per set, filled by each set's run: the 90 % holds over the whole corpus. */
const runs = new Map<string, SetRun>();
const rewritable = (list: Site[]): Site[] => list.filter((s) => !s.server && !NO_EQUIVALENT.has(s.method));

describe.each(SETS)('the codemod on real client code: $name', (set) => {
  let work: string;
  let dir: string;
  let before: Site[];
  let after: Site[];
  let report: CodemodReport;
  let errorsBefore: Map<string, Diagnostic[]>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'codemod-real-'));
    dir = join(work, set.name);
    cpSync(join(CORPUS, set.name), dir, { recursive: true });
    // The set resolves the SDK (and the helper's imports) from this repository, as an installed app would.
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
    before = sites(dir, set);
    errorsBefore = diagnostics(dir);
    ({ report } = await runCodemod({ path: dir, force: true, stdout: () => {}, stderr: () => {} }));
    after = sites(dir, set);
    runs.set(set.name, { before, after });
  }, 300_000);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it("analyses the files with types from the set's tsconfig.json", () => {
    expect(report.summary.filesTyped).toBe(report.summary.filesParsed);
    expect(report.summary.filesWithErrors).toBe(0);
  });

  it('rewrites client task call sites that have a SEP-2663 equivalent', () => {
    expect(rewritable(before).length).toBeGreaterThan(3);
    expect(rewritable(after).length).toBeLessThan(rewritable(before).length);
  });

  it('marks every client task call site it leaves', () => {
    const left = after.filter((s) => !s.server);
    const unmarked = left.filter((s) => !report.rows.some((r) => r.file === s.file && r.line === s.line));
    expect(unmarked.map((s) => `${s.file}:${s.line} ${s.text.trim()}`)).toEqual([]);
  });

  it('leaves server code untouched and unmarked', () => {
    const serverBefore = before.filter((s) => s.server).map((s) => `${s.file} ${s.text}`);
    const serverAfter = after.filter((s) => s.server);
    if (set.hasServerCode) expect(serverBefore.length).toBeGreaterThan(0);
    expect(serverAfter.map((s) => `${s.file} ${s.text}`)).toEqual(serverBefore);
    expect(serverAfter.filter((s) => report.rows.some((r) => r.file === s.file && r.line === s.line))).toEqual([]);
  });

  it('adds no type error to any file, and ends with no more errors than before', () => {
    const errorsAfter = diagnostics(dir);
    const added = newErrors(errorsBefore, errorsAfter);
    const total = (m: Map<string, Diagnostic[]>): number => [...m.values()].reduce((n, list) => n + list.length, 0);
    console.info(`real-code corpus, ${set.name}: tsc errors ${total(errorsBefore)} before, ${total(errorsAfter)} after, ${added.length} new`);
    expect(total(errorsAfter)).toBeLessThanOrEqual(total(errorsBefore));
    // Compared per file as a multiset of messages: an error the rewrite adds counts even where another one went away.
    expect(added.map((e) => `${e.file}:${e.statement[0]} ${e.text}`)).toEqual([]);
  }, 300_000);

  it('formats what it writes like the file: no trailing whitespace, no doubled blank lines it did not find', () => {
    for (const file of report.changedFiles) {
      const count = (text: string): [number, number] => [text.split('\n').filter((l) => /[ \t]$/.test(l)).length, (text.match(/\n[ \t]*\n[ \t]*\n/g) ?? []).length];
      const original = readFileSync(join(CORPUS, set.name, file), 'utf8');
      expect(count(readFileSync(join(dir, file), 'utf8')), file).toEqual(count(original));
    }
  });

  it('changes nothing when run a second time', async () => {
    const second = await runCodemod({ path: dir, force: true, stdout: () => {}, stderr: () => {} });
    expect(second.report.summary.filesChanged).toBe(0);
  }, 300_000);
});

describe('the codemod on the whole real-code corpus', () => {
  it('rewrites at least 90 % of the client task call sites that have a SEP-2663 equivalent', () => {
    expect([...runs.keys()]).toEqual(SETS.map((s) => s.name));
    const before = [...runs.values()].flatMap((r) => rewritable(r.before));
    const left = [...runs.entries()].flatMap(([name, r]) => rewritable(r.after).map((s) => `${name}/${s.file}:${s.line} ${s.text.trim()}`));
    expect(before.length).toBeGreaterThan(50);
    expect(left.length, left.join('\n')).toBeLessThanOrEqual(before.length * 0.1);
    // The figures docs/codemod.md quotes ("Measured on real code").
    const perSet = [...runs.entries()].map(([name, r]) => `${name} ${rewritable(r.before).length - rewritable(r.after).length}/${rewritable(r.before).length}`);
    const rewritten = before.length - left.length;
    console.info(`real-code corpus: ${rewritten} of ${before.length} client task call sites rewritten (${((100 * rewritten) / before.length).toFixed(1)} %; ${perSet.join(', ')}); left, each marked:\n${left.join('\n')}`);
  });
});
