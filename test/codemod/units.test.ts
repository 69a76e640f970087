import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Project, SyntaxKind } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../codemods/diff.js';
import { applyEdits, EditConflictError, mapOffset, sortEdits } from '../../codemods/edits.js';
import { MARKERS } from '../../codemods/markers.js';
import { NON_TERMINAL_DIALECT, statusesWhere, TERMINAL_DIALECT } from '../../codemods/status-words.js';
import { closeEnvelope, detectStyle, lineColumn, openEnvelope } from '../../codemods/text.js';
import { LEGACY_STATUS_TO_SEP2663 } from '../../src/mapping/statuses.js';

describe('unified diff', () => {
  const cases: Array<[string, string]> = [
    ['a\nb\nc\n', 'a\nB\nc\n'],
    ['one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n', 'zero\none\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT\nnine\nten\neleven\n'],
    ['no newline at the end', 'no newline at the end\nbut now there is\n'],
    ['x\n', ''],
    ['', 'created\n'],
  ];
  it.each(cases)('applies with git apply and gives the new text (%#)', (before, after) => {
    const dir = mkdtempSync(join(tmpdir(), 'codemod-diff-'));
    try {
      writeFileSync(join(dir, 'f.txt'), before);
      const patch = unifiedDiff(before, after, 'a/f.txt', 'b/f.txt');
      writeFileSync(join(dir, 'p.diff'), patch);
      const result = spawnSync('git', ['apply', '--unsafe-paths', '--directory=.', 'p.diff'], { cwd: dir, encoding: 'utf8' });
      expect(result.status, `${result.stderr}\n${patch}`).toBe(0);
      expect(readFileSync(join(dir, 'f.txt'), 'utf8')).toBe(after);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is empty for equal texts and keeps hunks apart when the changes are far from each other', () => {
    expect(unifiedDiff('same\n', 'same\n', 'a', 'b')).toBe('');
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    const changed = [...lines];
    changed[2] = 'changed 2';
    changed[30] = 'changed 30';
    const diff = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, 'a/x', 'b/x');
    expect(diff.match(/^@@ /gm)).toHaveLength(2);
  });
});

describe('edits', () => {
  it('apply in order, insertions before a replacement at the same place, and refuse overlaps', () => {
    expect(applyEdits('abcdef', [{ start: 2, end: 4, text: 'XY' }, { start: 2, end: 2, text: '>' }, { start: 6, end: 6, text: '!' }])).toBe('ab>XYef!');
    expect(() => applyEdits('abcdef', [{ start: 1, end: 4, text: '' }, { start: 3, end: 5, text: '' }])).toThrow(EditConflictError);
  });

  it('map old offsets into the new text', () => {
    const edits = sortEdits([{ start: 0, end: 0, text: '123' }, { start: 4, end: 6, text: 'Z' }]);
    expect(mapOffset(0, edits)).toBe(3);
    expect(mapOffset(2, edits)).toBe(5);
    expect(mapOffset(5, edits)).toBe(7); // inside the replacement: its start
    expect(mapOffset(8, edits)).toBe(10);
  });
});

describe('source envelope and style', () => {
  it('round-trips a BOM and CRLF, and leaves mixed line endings alone', () => {
    const crlf = '\ufeffa\r\nb\r\n';
    const env = openEnvelope(crlf);
    expect(env).toMatchObject({ bom: true, crlf: true, text: 'a\nb\n' });
    expect(closeEnvelope(env, env.text)).toBe(crlf);
    expect(closeEnvelope(env, 'a\nnew\nb\n')).toBe('\ufeffa\r\nnew\r\nb\r\n');
    const mixed = openEnvelope('a\r\nb\nc\r\n');
    expect(mixed.crlf).toBe(false);
    expect(mixed.text).toBe('a\r\nb\nc\r\n');
  });

  it('reads quotes, semicolons and indentation from the file', () => {
    expect(detectStyle('import { a } from "x"\nconst b = 1\nif (b) {\n    run()\n}\n')).toEqual({ quote: '"', semi: false, indent: '    ' });
    expect(detectStyle("import { a } from 'x';\nfunction f() {\n\treturn 1;\n}\n")).toEqual({ quote: "'", semi: true, indent: '\t' });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});

describe('status words come from the mapping tables', () => {
  it('terminal and running dialect words follow LEGACY_STATUS_TO_SEP2663 and the transitions', () => {
    expect([...TERMINAL_DIALECT].sort()).toEqual(['done', 'error']);
    expect([...NON_TERMINAL_DIALECT].sort()).toEqual(['pending', 'running']);
    expect(Object.keys(LEGACY_STATUS_TO_SEP2663).sort()).toEqual([...TERMINAL_DIALECT, ...NON_TERMINAL_DIALECT].sort());
  });

  it('evaluates loop conditions over task.status only', () => {
    const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile(
      'c.ts',
      "a(t.status === 'pending' || t.status === 'running'); b(!['done', 'error'].includes(t.status)); c(t.status !== 'done' && t.status !== 'error'); d(t.status === 'done' && ready);",
    );
    const conds = sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((c) => c.getArguments().length === 1 && /^[abcd]$/.test(c.getExpression().getText())).map((c) => c.getArguments()[0]!);
    const isT = (n: import('ts-morph').Node): boolean => n.getText() === 't';
    const all = ['pending', 'running', 'done', 'error'];
    expect([...statusesWhere(conds[0]!, isT, all)!]).toEqual(['pending', 'running']);
    expect([...statusesWhere(conds[1]!, isT, all)!]).toEqual(['pending', 'running']);
    expect([...statusesWhere(conds[2]!, isT, all)!]).toEqual(['pending', 'running']);
    expect(statusesWhere(conds[3]!, isT, all)).toBeUndefined();
  });
});

describe('marker catalogue', () => {
  it('has one stable, single-line instruction per code, documented in docs/codemod.md', () => {
    const doc = readFileSync(new URL('../../docs/codemod.md', import.meta.url), 'utf8');
    for (const [code, { instruction }] of Object.entries(MARKERS)) {
      expect(instruction).not.toContain('\n');
      expect(doc, code).toContain(`MCP-TASKS-MIGRATE(${code})`);
    }
  });
});
