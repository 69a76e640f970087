/** A unified diff of two texts, line by line (Myers), with `context` lines around each change. */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string, context = 3): string {
  if (oldText === newText) return '';
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const ops = diffLines(a.lines, b.lines);
  const hunks = toHunks(ops, context);
  let out = `--- ${oldName}\n+++ ${newName}\n`;
  for (const hunk of hunks) {
    out += `@@ -${range(hunk.oldStart, hunk.oldCount)} +${range(hunk.newStart, hunk.newCount)} @@\n`;
    for (const op of hunk.ops) {
      const line = (op.kind === 'insert' ? b.lines[op.newIndex]! : a.lines[op.oldIndex]!).replace(NO_EOL, '');
      out += `${op.kind === 'insert' ? '+' : op.kind === 'delete' ? '-' : ' '}${line}\n`;
      const lastOfOld = op.kind !== 'insert' && op.oldIndex === a.lines.length - 1 && !a.finalNewline;
      const lastOfNew = op.kind !== 'delete' && op.newIndex === b.lines.length - 1 && !b.finalNewline;
      if (lastOfOld || lastOfNew) out += '\\ No newline at end of file\n';
    }
  }
  return out;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
}

/** Marks a last line without a newline, so it never equals the same text with one. */
const NO_EOL = '\u0000';

function splitLines(text: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith('\n');
  const lines = (finalNewline ? text.slice(0, -1) : text).split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (!finalNewline) lines[lines.length - 1] += NO_EOL;
  return { lines, finalNewline };
}

type Op = { kind: 'equal' | 'delete' | 'insert'; oldIndex: number; newIndex: number };

/** Myers' O((N+M)D) diff; a very large D falls back to "delete all, insert all". */
function diffLines(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const limit = Math.min(max, 4000);
  const offset = max + 1;
  let v: Int32Array = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found !== -1) break;
  }
  if (found === -1) {
    return [
      ...a.map((_, i) => ({ kind: 'delete' as const, oldIndex: i, newIndex: 0 })),
      ...b.map((_, j) => ({ kind: 'insert' as const, oldIndex: n, newIndex: j })),
    ];
  }
  // Walk the trace back from (n, m).
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: 'equal', oldIndex: x, newIndex: y });
    }
    if (x === prevX) {
      y--;
      ops.push({ kind: 'insert', oldIndex: x, newIndex: y });
    } else {
      x--;
      ops.push({ kind: 'delete', oldIndex: x, newIndex: y });
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    ops.push({ kind: 'equal', oldIndex: x, newIndex: y });
  }
  return ops.reverse();
}

interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  ops: Op[];
}

function toHunks(ops: Op[], context: number): Hunk[] {
  const hunks: Hunk[] = [];
  const changed = ops.map((op) => op.kind !== 'equal');
  let i = 0;
  while (i < ops.length) {
    if (!changed[i]) {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // Extend while the next change is within 2 * context equal lines.
    for (;;) {
      while (end < ops.length && changed[end]) end++;
      let next = end;
      while (next < ops.length && !changed[next]) next++;
      if (next < ops.length && next - end <= 2 * context) {
        end = next;
        continue;
      }
      break;
    }
    const stop = Math.min(ops.length, end + context);
    const slice = ops.slice(start, stop);
    const first = slice[0]!;
    const oldCount = slice.filter((op) => op.kind !== 'insert').length;
    const newCount = slice.filter((op) => op.kind !== 'delete').length;
    hunks.push({ oldStart: first.oldIndex + 1, oldCount, newStart: first.newIndex + 1, newCount, ops: slice });
    i = stop;
  }
  return hunks;
}
