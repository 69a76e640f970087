import { Node, type SourceFile, type Type, type TypeChecker } from 'ts-morph';
import { LEGACY_METHODS } from './mcp-calls.js';
import { textKey } from './method-values.js';

/**
 * Asks the type checker which expressions of a file hold a legacy task method where the syntax
 * cannot see it: an imported constant, a member of an imported `as const` object or enum, a
 * parameter typed with the method's literal type. Only expressions in a method's position are
 * asked: a request's `method`, a call argument, a `case` label, an operand of `===`/`!==`.
 * The answer is keyed by the expression's text; texts typed differently in two places are left
 * out. A union of methods is kept joined by `|` (`methodsOf` splits it): no single rewrite fits it.
 */
export function typedMethodValues(sf: SourceFile, checker: TypeChecker): Map<string, string> {
  const values = new Map<string, string>();
  const conflicting = new Set<string>();
  const ask = (expr: Node | undefined): void => {
    if (!expr || !(Node.isIdentifier(expr) || Node.isPropertyAccessExpression(expr) || Node.isElementAccessExpression(expr))) return;
    const key = textKey(expr);
    if (conflicting.has(key)) return;
    const value = literalMethods(checker.getTypeAtLocation(expr));
    if (value === undefined) return;
    const seen = values.get(key);
    if (seen !== undefined && seen !== value) {
      values.delete(key);
      conflicting.add(key);
    } else {
      values.set(key, value);
    }
  };
  sf.forEachDescendant((node) => {
    if (Node.isPropertyAssignment(node) && node.getName() === 'method') ask(node.getInitializer());
    else if (Node.isShorthandPropertyAssignment(node) && node.getName() === 'method') ask(node.getNameNode());
    else if (Node.isCallExpression(node)) for (const arg of node.getArguments()) ask(arg);
    else if (Node.isCaseClause(node)) ask(node.getExpression());
    else if (Node.isBinaryExpression(node) && /^[!=]==?$/.test(node.getOperatorToken().getText())) {
      ask(node.getLeft());
      ask(node.getRight());
    }
  });
  return values;
}

/** The legacy methods a value joined by `typedMethodValues` (or a plain string) stands for. */
export function methodsOf(value: string | undefined): string[] {
  return value === undefined ? [] : value.split('|').filter((m) => LEGACY_METHODS.has(m));
}

function literalMethods(type: Type): string | undefined {
  const members = type.isUnion() ? type.getUnionTypes() : [type];
  const strings: string[] = [];
  for (const member of members) {
    const value = member.isStringLiteral() || member.isEnumLiteral() ? member.getLiteralValue() : undefined;
    if (typeof value !== 'string') return undefined;
    strings.push(value);
  }
  if (strings.length === 0 || !strings.some((s) => LEGACY_METHODS.has(s))) return undefined;
  return [...new Set(strings)].join('|');
}
