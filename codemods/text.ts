/**
 * The bytes around the code: byte-order mark and line endings. A file whose lines all end in
 * CRLF is processed as LF and written back as CRLF, so untouched lines stay byte-identical; a
 * file with mixed endings is processed as it is (inserted lines get LF).
 */
export interface SourceEnvelope {
  bom: boolean;
  crlf: boolean;
  /** The text the transforms see. */
  text: string;
}

export function openEnvelope(raw: string): SourceEnvelope {
  const bom = raw.charCodeAt(0) === 0xfeff;
  let text = bom ? raw.slice(1) : raw;
  const crlfCount = countOf(text, '\r\n');
  const lfCount = countOf(text, '\n');
  const crlf = crlfCount > 0 && crlfCount === lfCount;
  if (crlf) text = text.replace(/\r\n/g, '\n');
  return { bom, crlf, text };
}

export function closeEnvelope(envelope: SourceEnvelope, text: string): string {
  const body = envelope.crlf ? text.replace(/\r?\n/g, '\r\n') : text;
  return envelope.bom ? `\ufeff${body}` : body;
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** How the file writes code, so generated code reads like its neighbours. */
export interface CodeStyle {
  quote: "'" | '"';
  semi: boolean;
  /** One level of indentation. */
  indent: string;
}

export function detectStyle(text: string): CodeStyle {
  return { quote: detectQuote(text), semi: detectSemi(text), indent: detectIndent(text) };
}

function detectQuote(text: string): "'" | '"' {
  const match = /(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|^import\s+)(['"])/m.exec(text);
  return match?.[1] === '"' ? '"' : "'";
}

function detectSemi(text: string): boolean {
  // Lines that open a block or continue on the next line say nothing about semicolons.
  const lines = text
    .split('\n')
    .filter((l) => /^\s*(import|const|let|var|export|return|await)\b/.test(l) && !/[{([,=>+\-*/|&?:]\s*$/.test(l))
    .slice(0, 20);
  if (lines.length === 0) return true;
  const ending = lines.filter((l) => /;\s*$/.test(l)).length;
  return ending * 2 >= lines.length;
}

function detectIndent(text: string): string {
  const counts = new Map<number, number>();
  let tabs = 0;
  let seen = 0;
  for (const line of text.split('\n')) {
    if (seen > 200) break;
    const match = /^([ \t]+)\S/.exec(line);
    if (!match) continue;
    seen++;
    const ws = match[1]!;
    if (ws.startsWith('\t')) {
      tabs++;
      continue;
    }
    if (line.trimStart().startsWith('*')) continue; // JSDoc continuation lines are one space in
    counts.set(ws.length, (counts.get(ws.length) ?? 0) + 1);
  }
  if (tabs > 0 && tabs * 2 >= seen) return '\t';
  const sizes = [...counts.keys()].filter((n) => n > 0);
  if (sizes.length === 0) return '  ';
  const smallest = Math.min(...sizes);
  return ' '.repeat(smallest >= 4 ? 4 : smallest === 3 ? 2 : smallest);
}

/** The whitespace at the start of the line that holds `offset`. */
export function indentationAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  return /^[ \t]*/.exec(text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd))?.[0] ?? '';
}

export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** True when only whitespace precedes `offset` on its line. */
export function startsLine(text: string, offset: number): boolean {
  return /^[ \t]*$/.test(text.slice(lineStartOf(text, offset), offset));
}

/** 1-based line and column of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** Where to put a new line after `offset`: past a trailing comment on the same line. */
export function endOfLine(text: string, offset: number): number {
  const lineEnd = text.indexOf('\n', offset);
  const rest = text.slice(offset, lineEnd === -1 ? text.length : lineEnd);
  return /^[ \t]*(\/\/.*|\/\*.*\*\/[ \t]*)?$/.test(rest) ? (lineEnd === -1 ? text.length : lineEnd) : offset;
}
