import { Node, SyntaxKind } from 'ts-morph';
import { DIALECT_STATUSES, LEGACY_STATUS_TO_SEP2663, type DialectStatus } from '../src/mapping/statuses.js';
import { TRANSITIONS } from '../src/mapping/transitions.js';

/** The tasks/create dialect's words, from the mapping table. */
export const DIALECT_WORDS: ReadonlySet<string> = new Set(DIALECT_STATUSES);

/** A dialect status is terminal when every SEP-2663 status it stands for is (no transitions out). */
export const TERMINAL_DIALECT: ReadonlySet<DialectStatus> = new Set(DIALECT_STATUSES.filter((s) => LEGACY_STATUS_TO_SEP2663[s].every((m) => TRANSITIONS[m].length === 0)));
export const NON_TERMINAL_DIALECT: ReadonlySet<DialectStatus> = new Set(DIALECT_STATUSES.filter((s) => !TERMINAL_DIALECT.has(s)));

/** `expr.status` (or `expr?.status`). */
export function statusOf(node: Node, isSubject: (n: Node) => boolean): boolean {
  let cur = node;
  while (Node.isParenthesizedExpression(cur)) cur = cur.getExpression();
  return Node.isPropertyAccessExpression(cur) && cur.getName() === 'status' && isSubject(cur.getExpression());
}

function literal(node: Node): string | undefined {
  let cur = node;
  while (Node.isParenthesizedExpression(cur)) cur = cur.getExpression();
  return Node.isStringLiteral(cur) || Node.isNoSubstitutionTemplateLiteral(cur) ? cur.getLiteralText() : undefined;
}

/**
 * Evaluates a condition over `subject.status` for one status value. Undefined when the condition
 * depends on anything else (then the codemod cannot tell what it means).
 */
export function evalStatusCondition(expr: Node, isSubject: (n: Node) => boolean, status: string): boolean | undefined {
  if (Node.isParenthesizedExpression(expr)) return evalStatusCondition(expr.getExpression(), isSubject, status);
  if (expr.getKind() === SyntaxKind.TrueKeyword) return true;
  if (expr.getKind() === SyntaxKind.FalseKeyword) return false;
  if (Node.isPrefixUnaryExpression(expr) && expr.getOperatorToken() === SyntaxKind.ExclamationToken) {
    const inner = evalStatusCondition(expr.getOperand(), isSubject, status);
    return inner === undefined ? undefined : !inner;
  }
  if (Node.isBinaryExpression(expr)) {
    const op = expr.getOperatorToken().getKind();
    if (op === SyntaxKind.AmpersandAmpersandToken || op === SyntaxKind.BarBarToken) {
      const l = evalStatusCondition(expr.getLeft(), isSubject, status);
      const r = evalStatusCondition(expr.getRight(), isSubject, status);
      if (l === undefined || r === undefined) return undefined;
      return op === SyntaxKind.AmpersandAmpersandToken ? l && r : l || r;
    }
    const eq = op === SyntaxKind.EqualsEqualsEqualsToken || op === SyntaxKind.EqualsEqualsToken;
    const ne = op === SyntaxKind.ExclamationEqualsEqualsToken || op === SyntaxKind.ExclamationEqualsToken;
    if (!eq && !ne) return undefined;
    const [l, r] = [expr.getLeft(), expr.getRight()];
    const value = statusOf(l, isSubject) ? literal(r) : statusOf(r, isSubject) ? literal(l) : undefined;
    if (value === undefined) return undefined;
    return eq ? value === status : value !== status;
  }
  if (Node.isCallExpression(expr)) {
    const callee = expr.getExpression();
    const [arg] = expr.getArguments();
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'includes' || !arg || !statusOf(arg, isSubject)) return undefined;
    const list = callee.getExpression();
    if (!Node.isArrayLiteralExpression(list)) return undefined;
    const values = list.getElements().map(literal);
    if (values.some((v) => v === undefined)) return undefined;
    return values.includes(status);
  }
  return undefined;
}

/** The statuses (of `among`) for which the condition holds; undefined when it depends on something else. */
export function statusesWhere(expr: Node, isSubject: (n: Node) => boolean, among: Iterable<string>): Set<string> | undefined {
  const out = new Set<string>();
  for (const status of among) {
    const value = evalStatusCondition(expr, isSubject, status);
    if (value === undefined) return undefined;
    if (value) out.add(status);
  }
  return out;
}

export function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
