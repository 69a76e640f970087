import { ts, type Node, type SourceFile } from 'ts-morph';

/**
 * Fast paths over the bare TypeScript AST. Wrapping every node of a file in a ts-morph object
 * is what costs time and memory on large repos, so scans run on compiler nodes and only the
 * matches are wrapped.
 */

/** The ts-morph wrapper of a compiler node of `sf` (ts-morph caches it). */
export function wrap<T extends Node = Node>(sf: SourceFile, node: ts.Node): T {
  return (sf as unknown as { _getNodeFromCompilerNode(n: ts.Node): T })._getNodeFromCompilerNode(node);
}

/** Every compiler node under `root` (itself included) for which `match` holds. */
export function findRaw(root: ts.Node, match: (node: ts.Node) => boolean): ts.Node[] {
  const out: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    if (match(node)) out.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return out;
}

/** Calls `x.<name>(...)` (or `name(...)`) whose name is in `names`, wrapped. */
export function callsNamed(sf: SourceFile, names: ReadonlySet<string>, root: Node = sf): Array<import('ts-morph').CallExpression> {
  return findRaw(root.compilerNode, (n) => {
    if (!ts.isCallExpression(n)) return false;
    const callee = n.expression;
    if (ts.isPropertyAccessExpression(callee)) return names.has(callee.name.text);
    return ts.isIdentifier(callee) && names.has(callee.text);
  }).map((n) => wrap(sf, n));
}

/** Nodes of one kind under `root`, wrapped, found without wrapping the rest. */
export function nodesOfKind<T extends Node>(sf: SourceFile, kind: ts.SyntaxKind, root: Node = sf, filter?: (n: ts.Node) => boolean): T[] {
  return findRaw(root.compilerNode, (n) => n.kind === kind && (!filter || filter(n))).map((n) => wrap<T>(sf, n));
}

/** A name only used as a property key or member name (it binds nothing and shadows nothing). */
export function isRawPropertyName(id: ts.Identifier): boolean {
  const p = id.parent;
  if (!p) return false;
  if (ts.isPropertyAccessExpression(p)) return p.name === id;
  if (ts.isPropertyAssignment(p) || ts.isPropertySignature(p) || ts.isPropertyDeclaration(p) || ts.isMethodDeclaration(p) || ts.isMethodSignature(p) || ts.isGetAccessorDeclaration(p) || ts.isSetAccessorDeclaration(p)) return p.name === id;
  if (ts.isBindingElement(p)) return p.propertyName === id;
  if (ts.isQualifiedName(p)) return p.right === id;
  if (ts.isJsxAttribute(p)) return true;
  return false;
}

/** Identifier texts under `root` that can bind or reference something. */
export function bindingNames(root: ts.Node): Set<string> {
  const out = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && !isRawPropertyName(node)) out.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return out;
}

/** Identifiers named `name` under `root`, wrapped. */
export function identifiersNamed(sf: SourceFile, name: string, root: Node = sf): Node[] {
  return findRaw(root.compilerNode, (n) => ts.isIdentifier(n) && n.text === name).map((n) => wrap(sf, n));
}
