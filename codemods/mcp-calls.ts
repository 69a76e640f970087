import {
  Node,
  type CallExpression,
  type Expression,
  type ObjectLiteralExpression,
  type VariableDeclaration,
} from 'ts-morph';
import { METHOD_TABLE } from '../src/mapping/methods.js';
import type { McpResolver } from './mcp-imports.js';
import { receiverKey } from './receiver-types.js';
import { syntacticKind } from './receivers.js';
import { constantString } from './method-values.js';
import { resolveIdentifier } from './scope.js';

/** An SDK Client as far as a call's receiver can be traced. */
export type ClientRef =
  /** `const name = new Client(...)` in this file: a TasksClient can be created next to it. */
  | { kind: 'constructed'; decl: VariableDeclaration; name: string }
  /** Provably an SDK Client created elsewhere (a parameter, `this.client`, a module `let`, a helper's return value). */
  | { kind: 'proven' }
  /** An SDK Server or McpServer: its calls are never touched or marked. */
  | { kind: 'server' }
  | { kind: 'unknown' };

/**
 * What the receiver of a call is. The type checker's answer (when the repo has a tsconfig) wins
 * over the syntactic proof; a `const client = new Client(…)` of this file stays `constructed`
 * either way, so a TasksClient can be built next to it.
 */
export function resolveClient(receiver: Node, mcp: McpResolver): ClientRef {
  let node: Node = receiver;
  while (Node.isParenthesizedExpression(node) || Node.isNonNullExpression(node) || Node.isAsExpression(node)) node = node.getExpression();
  if (Node.isIdentifier(node)) {
    const binding = resolveIdentifier(node);
    if (binding?.kind === 'variable' && !binding.element && mcp.isNewOf(binding.decl.getInitializer(), 'Client')) return { kind: 'constructed', decl: binding.decl, name: node.getText() };
  }
  const typed = mcp.receiverKinds?.get(receiverKey(receiver));
  const kind = typed ?? syntacticKind(receiver, mcp);
  if (kind === 'client') return { kind: 'proven' };
  if (kind === 'server') return { kind: 'server' };
  return { kind: 'unknown' };
}

/** `<receiver>.experimental.tasks.<method>(...)`. */
export interface ExperimentalCall {
  call: CallExpression;
  receiver: Node;
  method: string;
}

export function matchExperimentalCall(call: CallExpression): ExperimentalCall | undefined {
  const callee = call.getExpression();
  if (!Node.isPropertyAccessExpression(callee)) return undefined;
  const tasks = callee.getExpression();
  if (!Node.isPropertyAccessExpression(tasks) || tasks.getName() !== 'tasks') return undefined;
  const experimental = tasks.getExpression();
  if (!Node.isPropertyAccessExpression(experimental) || experimental.getName() !== 'experimental') return undefined;
  return { call, receiver: experimental.getExpression(), method: callee.getName() };
}

/** Every method an old client may send; read from the mapping table. */
export const LEGACY_METHODS: ReadonlySet<string> = new Set(METHOD_TABLE.map((row) => row.method));

/** `<receiver>.request({ method: '<literal>', params? }, schema?, options?)`. */
export interface RawRequest {
  call: CallExpression;
  receiver: Node;
  method: string;
  request: ObjectLiteralExpression;
  params: Expression | undefined;
  schema: Node | undefined;
  options: Node | undefined;
}

export function matchRawRequest(call: CallExpression, typed?: ReadonlyMap<string, string>): RawRequest | undefined {
  const callee = call.getExpression();
  if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'request') return undefined;
  const [request, schema, options] = call.getArguments();
  if (!request || !Node.isObjectLiteralExpression(request)) return undefined;
  const value = constantString(propertyValue(request, 'method'), typed);
  if (value === undefined || !LEGACY_METHODS.has(value)) return undefined;
  const paramsProp = request.getProperty('params');
  let params: Expression | undefined;
  if (paramsProp && Node.isPropertyAssignment(paramsProp)) params = paramsProp.getInitializer();
  else if (paramsProp && Node.isShorthandPropertyAssignment(paramsProp)) params = paramsProp.getNameNode() as unknown as Expression;
  const extra = request.getProperties().some((p) => {
    const name = Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p) ? p.getName() : undefined;
    return name !== 'method' && name !== 'params';
  });
  if (extra) return undefined;
  return { call, receiver: callee.getExpression(), method: value, request, params, schema, options };
}

/** The value of a plain property of an object literal (`name: value` or shorthand `name`). */
export function propertyValue(obj: ObjectLiteralExpression, name: string): Node | undefined {
  const prop = obj.getProperty(name);
  if (!prop) return undefined;
  if (Node.isPropertyAssignment(prop)) return prop.getInitializer();
  if (Node.isShorthandPropertyAssignment(prop)) return prop.getNameNode();
  return undefined;
}

/** Names of the properties of an object literal; undefined when it has spreads, methods or computed names. */
export function plainPropertyNames(obj: ObjectLiteralExpression): string[] | undefined {
  const names: string[] = [];
  for (const prop of obj.getProperties()) {
    if (Node.isPropertyAssignment(prop)) {
      const nameNode = prop.getNameNode();
      if (Node.isComputedPropertyName(nameNode)) return undefined;
      names.push(prop.getName().replace(/^['"]|['"]$/g, ''));
    } else if (Node.isShorthandPropertyAssignment(prop)) {
      names.push(prop.getName());
    } else {
      return undefined;
    }
  }
  return names;
}

/** Side-effect-free, cheap to repeat: an identifier, a literal, or a chain of property reads on one. */
export function isRepeatable(node: Node | undefined): boolean {
  if (!node) return false;
  if (Node.isIdentifier(node) || Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node) || Node.isNumericLiteral(node)) return true;
  if (Node.isPropertyAccessExpression(node)) return isRepeatable(node.getExpression());
  if (Node.isParenthesizedExpression(node)) return isRepeatable(node.getExpression());
  return false;
}

/** The statement that holds `node` directly in a block, a source file or a case clause. */
export function statementOf(node: Node): Node | undefined {
  for (let cur: Node | undefined = node; cur; cur = cur.getParent()) {
    const parent = cur.getParent();
    if (!parent) return undefined;
    if (Node.isBlock(parent) || Node.isSourceFile(parent) || Node.isModuleBlock(parent) || Node.isCaseClause(parent) || Node.isDefaultClause(parent)) return cur;
  }
  return undefined;
}

/** The value of `await <call>` or `<call>` is thrown away (an expression statement, `void`). */
export function isResultUnused(call: Node): boolean {
  let node: Node = call;
  let parent = node.getParent();
  while (parent && (Node.isAwaitExpression(parent) || Node.isParenthesizedExpression(parent) || Node.isVoidExpression(parent))) {
    node = parent;
    parent = node.getParent();
  }
  return parent !== undefined && Node.isExpressionStatement(parent);
}

/** The expression inside parentheses, `as`/`satisfies` casts and `!`. */
export function unwrapExpression(node: Node): Node {
  let cur = node;
  while (Node.isParenthesizedExpression(cur) || Node.isAsExpression(cur) || Node.isSatisfiesExpression(cur) || Node.isNonNullExpression(cur) || Node.isTypeAssertion(cur)) cur = cur.getExpression();
  return cur;
}

/** The outermost expression around `node` that only wraps it (parentheses, casts, `!`, `await`). */
export function outermostWrapper(node: Node, throughAwait = true): Node {
  let cur = node;
  for (;;) {
    const parent = cur.getParent();
    if (!parent) return cur;
    const wraps = Node.isParenthesizedExpression(parent) || Node.isAsExpression(parent) || Node.isSatisfiesExpression(parent) || Node.isNonNullExpression(parent) || Node.isTypeAssertion(parent) || (throughAwait && Node.isAwaitExpression(parent));
    if (!wraps) return cur;
    cur = parent;
  }
}
