import { Node } from 'ts-morph';
import { resolveIdentifier } from './scope.js';

/** How deep a chain of constants is followed (`const A = B; const B = METHODS.get; …`). */
const MAX_DEPTH = 8;

/**
 * The string an expression holds when the code fixes it: a literal, a `const` initialised with
 * one, a property of a `const` object literal (`METHODS.get`, `METHODS['get']`, `as const` or
 * not), a member of an enum of this file, followed through casts and chains of such constants.
 * Anything else (an import, a parameter, a computed value) is asked of `typed`: the type
 * checker's literal type per expression text, in runs with a tsconfig.
 */
export function constantString(node: Node | undefined, typed?: ReadonlyMap<string, string>, depth = 0): string | undefined {
  if (!node || depth > MAX_DEPTH) return undefined;
  const expr = unwrap(node);
  if (Node.isStringLiteral(expr) || Node.isNoSubstitutionTemplateLiteral(expr)) return expr.getLiteralText();
  const own = syntacticValue(expr, typed, depth);
  if (own !== undefined) return own;
  return typed?.get(textKey(expr));
}

/** The key a typed value is stored under: the expression's text without spaces. */
export function textKey(node: Node): string {
  return node.getText().replace(/\s+/g, '');
}

function syntacticValue(expr: Node, typed: ReadonlyMap<string, string> | undefined, depth: number): string | undefined {
  if (Node.isIdentifier(expr)) {
    const init = constInitializer(expr);
    return init ? constantString(init, typed, depth + 1) : undefined;
  }
  const member = memberOf(expr);
  if (!member) return undefined;
  const base = unwrap(member.base);
  if (!Node.isIdentifier(base)) return undefined;
  const binding = resolveIdentifier(base);
  if (binding?.kind === 'declaration' && Node.isEnumDeclaration(binding.node)) {
    const init = binding.node.getMember(member.name)?.getInitializer();
    return init ? constantString(init, typed, depth + 1) : undefined;
  }
  const init = constInitializer(base);
  const obj = init ? unwrap(init) : undefined;
  if (!obj || !Node.isObjectLiteralExpression(obj)) return undefined;
  const prop = obj.getProperty(member.name) ?? obj.getProperty(`'${member.name}'`) ?? obj.getProperty(`"${member.name}"`);
  if (!prop || !Node.isPropertyAssignment(prop)) return undefined;
  return constantString(prop.getInitializer(), typed, depth + 1);
}

/** `a.b` or `a['b']` → base and name. */
function memberOf(expr: Node): { base: Node; name: string } | undefined {
  if (Node.isPropertyAccessExpression(expr) && !expr.hasQuestionDotToken()) return { base: expr.getExpression(), name: expr.getName() };
  if (Node.isElementAccessExpression(expr)) {
    const arg = expr.getArgumentExpression();
    if (arg && (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg))) return { base: expr.getExpression(), name: arg.getLiteralText() };
  }
  return undefined;
}

/** The initializer of the `const` an identifier names (never a `let`: it may be reassigned). */
function constInitializer(id: Node): Node | undefined {
  const binding = resolveIdentifier(id);
  if (binding?.kind !== 'variable' || binding.element) return undefined;
  if (binding.decl.getVariableStatement()?.getDeclarationKind() !== 'const') return undefined;
  return binding.decl.getInitializer();
}

function unwrap(node: Node): Node {
  let cur = node;
  while (Node.isAsExpression(cur) || Node.isParenthesizedExpression(cur) || Node.isSatisfiesExpression(cur) || Node.isNonNullExpression(cur) || Node.isTypeAssertion(cur)) cur = cur.getExpression();
  return cur;
}
