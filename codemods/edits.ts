/**
 * Text edits on one version of a file. A transform collects edits against the text it parsed;
 * the file session applies them at once and re-parses. Positions are UTF-16 offsets.
 */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export class EditConflictError extends Error {
  constructor(a: Edit, b: Edit) {
    super(`overlapping edits [${a.start}, ${a.end}) and [${b.start}, ${b.end})`);
    this.name = 'EditConflictError';
  }
}

/** Sorted by start; at one position insertions come first, in the order they were made. */
export function sortEdits(edits: readonly Edit[]): Edit[] {
  return edits
    .map((edit, index) => ({ edit, index }))
    .sort((a, b) => a.edit.start - b.edit.start || width(a.edit) - width(b.edit) || a.index - b.index)
    .map(({ edit }) => edit);
}

function width(edit: Edit): number {
  return edit.end - edit.start;
}

/** Throws EditConflictError when two edits overlap (insertions at the start of a replacement are fine). */
export function checkEdits(sorted: readonly Edit[]): void {
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const next = sorted[i]!;
    if (next.start < prev.end) throw new EditConflictError(prev, next);
  }
}

export function applyEdits(text: string, edits: readonly Edit[]): string {
  if (edits.length === 0) return text;
  const sorted = sortEdits(edits);
  checkEdits(sorted);
  let out = '';
  let at = 0;
  for (const edit of sorted) {
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

/**
 * Where an offset of the old text lands in the new one: after an insertion at or before it, or
 * at the start of a replacement that covers it.
 */
export function mapOffset(offset: number, sorted: readonly Edit[]): number {
  let delta = 0;
  for (const edit of sorted) {
    if (edit.start > offset) break;
    if (edit.start === edit.end || offset >= edit.end) {
      delta += edit.text.length - (edit.end - edit.start);
    } else {
      return edit.start + delta;
    }
  }
  return offset + delta;
}

/** The text of [start, end) with the edits inside that range applied (edits outside it are ignored). */
export function textWithEdits(text: string, start: number, end: number, edits: readonly Edit[]): string {
  const inside = edits.filter((e) => e.start >= start && e.end <= end);
  return applyEdits(text.slice(start, end), inside.map((e) => ({ start: e.start - start, end: e.end - start, text: e.text })));
}
