import { Node, ts } from 'ts-morph';
import { applyEdits, type Edit } from './edits.js';
import { bindingNames } from './raw.js';
import { indentationAt, lineStartOf, startsLine, type CodeStyle } from './text.js';

/** Source ranges whose inner line starts must not be re-indented (multi-line template literals). */
function protectedRanges(root: Node, start: number, end: number): Array<[number, number]> {
  const sf = root.getSourceFile().compilerNode;
  const ranges: Array<[number, number]> = [];
  const visit = (node: ts.Node): void => {
    if (node.end <= start || node.pos >= end) return;
    if ((node.kind === ts.SyntaxKind.TemplateExpression || node.kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral) && node.getText(sf).includes('\n')) {
      ranges.push([node.getStart(sf), node.end]);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(root.compilerNode);
  return ranges;
}

/**
 * The text of [start, end) with `edits` applied and every line after the first moved from
 * `fromIndent` to `toIndent` (lines inside multi-line template literals keep their bytes).
 */
export function reindentedSlice(root: Node, text: string, start: number, end: number, fromIndent: string, toIndent: string, edits: readonly Edit[] = []): string {
  const inside = edits.filter((e) => e.start >= start && e.end <= end);
  const keep = protectedRanges(root, start, end);
  const indentEdits: Edit[] = [];
  if (fromIndent !== toIndent) {
    for (let at = text.indexOf('\n', start); at !== -1 && at < end - 1; at = text.indexOf('\n', at + 1)) {
      const lineStart = at + 1;
      if (keep.some(([s, e]) => lineStart > s && lineStart < e)) continue;
      if (inside.some((e) => lineStart > e.start && lineStart < e.end)) continue;
      const lineEnd = text.indexOf('\n', lineStart);
      const line = text.slice(lineStart, lineEnd === -1 || lineEnd > end ? end : lineEnd);
      if (/^[ \t]*$/.test(line)) {
        // A blank line stays empty: indenting it would leave trailing whitespace.
        if (line.length > 0) indentEdits.push({ start: lineStart, end: lineStart + line.length, text: '' });
        continue;
      }
      const ws = /^[ \t]*/.exec(line)![0];
      const common = commonPrefix(ws, fromIndent);
      indentEdits.push({ start: lineStart, end: lineStart + common.length, text: toIndent });
    }
  }
  const all = [...inside, ...indentEdits].map((e) => ({ start: e.start - start, end: e.end - start, text: e.text }));
  return applyEdits(text.slice(start, end), all);
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

/** Where a statement's own text begins, including the comments directly above it. */
export function statementStartWithComments(text: string, statement: Node): number {
  const ranges = statement.getLeadingCommentRanges();
  const first = ranges[0]?.getPos() ?? statement.getStart();
  return first;
}

/**
 * Statements moved to a new place: the text from the first one (with its leading comments) to the
 * end of the last one, edits applied, re-indented to `toIndent` on every line.
 */
export function statementsAt(root: Node, text: string, statements: readonly Node[], toIndent: string, edits: readonly Edit[] = []): string {
  if (statements.length === 0) return '';
  const first = statements[0]!;
  const last = statements[statements.length - 1]!;
  const start = statementStartWithComments(text, first);
  const fromIndent = startsLine(text, start) ? indentationAt(text, start) : indentationAt(text, start);
  return toIndent + reindentedSlice(root, text, start, last.getEnd(), fromIndent, toIndent, edits);
}

/** An expression's text re-indented so that its continuation lines sit under `toIndent`. */
export function expressionAt(root: Node, text: string, node: Node, toIndent: string, edits: readonly Edit[] = []): string {
  const fromIndent = indentationAt(text, lineStartOf(text, node.getStart()));
  return reindentedSlice(root, text, node.getStart(), node.getEnd(), fromIndent, toIndent, edits);
}

export function quoted(style: CodeStyle, value: string): string {
  const q = style.quote;
  return q + value.replace(/\\/g, '\\\\').replace(new RegExp(q, 'g'), `\\${q}`) + q;
}

export function semi(style: CodeStyle): string {
  return style.semi ? ';' : '';
}

/** True when the statements always leave the block: the last one is a return or a throw. */
export function alwaysExits(statements: readonly Node[]): boolean {
  const last = statements[statements.length - 1];
  if (!last) return false;
  if (Node.isReturnStatement(last) || Node.isThrowStatement(last)) return true;
  if (Node.isBlock(last)) return alwaysExits(last.getStatements());
  if (Node.isIfStatement(last)) {
    const otherwise = last.getElseStatement();
    return otherwise !== undefined && alwaysExits([last.getThenStatement()]) && alwaysExits([otherwise]);
  }
  return false;
}

/** The statements of a block, or the single statement itself. */
export function bodyStatements(node: Node): Node[] {
  return Node.isBlock(node) ? node.getStatements() : [node];
}

/**
 * Control flow that would change meaning if these statements moved into a callback: a `return`,
 * or a `break`/`continue` that leaves them, or a `yield` (nested functions, loops and switches are fine).
 */
export function escapesCallback(statements: readonly Node[]): boolean {
  return statements.some((st) => escapes(st, false, false, true));
}

/** A `break`/`continue` that targets a loop or switch outside the statements. */
export function breaksOut(statements: readonly Node[]): boolean {
  return statements.some((st) => escapes(st, false, false, false));
}

function escapes(node: Node, inLoop: boolean, inSwitch: boolean, returnsCount: boolean): boolean {
  if (Node.isFunctionDeclaration(node) || Node.isFunctionExpression(node) || Node.isArrowFunction(node) || Node.isMethodDeclaration(node) || Node.isClassDeclaration(node) || Node.isClassExpression(node)) return false;
  if (returnsCount && (Node.isReturnStatement(node) || Node.isYieldExpression(node))) return true;
  if (Node.isBreakStatement(node)) return node.getLabel() !== undefined || !(inLoop || inSwitch);
  if (Node.isContinueStatement(node)) return node.getLabel() !== undefined || !inLoop;
  const loop = Node.isForStatement(node) || Node.isForOfStatement(node) || Node.isForInStatement(node) || Node.isWhileStatement(node) || Node.isDoStatement(node);
  const sw = Node.isSwitchStatement(node);
  let found = false;
  node.forEachChild((child) => {
    if (!found && escapes(child, inLoop || loop, inSwitch || sw, returnsCount)) found = true;
  });
  return found;
}

export function containsAwait(nodes: readonly Node[]): boolean {
  const visit = (node: Node): boolean => {
    if (Node.isFunctionDeclaration(node) || Node.isFunctionExpression(node) || Node.isArrowFunction(node) || Node.isMethodDeclaration(node)) return false;
    if (Node.isAwaitExpression(node)) return true;
    if (Node.isForOfStatement(node) && node.isAwaited()) return true;
    let found = false;
    node.forEachChild((child) => {
      if (!found && visit(child)) found = true;
    });
    return found;
  };
  return nodes.some(visit);
}

/** Every identifier text used in the nodes (to pick callback parameter names that shadow nothing). */
export function identifierTexts(nodes: readonly Node[]): Set<string> {
  const out = new Set<string>();
  for (const node of nodes) for (const name of bindingNames(node.compilerNode)) out.add(name);
  return out;
}

/** `base`, or `base2`, `base3`, … whichever `taken` does not hold. */
export function unusedName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}${i}`)) return `${base}${i}`;
}
