import {
  Node,
  ts,
  type BindingElement,
  type ImportDeclaration,
  type ParameterDeclaration,
  type SourceFile,
  type VariableDeclaration,
} from 'ts-morph';
import { identifiersNamed, wrap } from './raw.js';

/**
 * Lexical name resolution without a type checker: walks the enclosing scopes of a node and finds
 * the declaration a name refers to. Good enough for the shapes the codemod rewrites; anything
 * it cannot see (globals, `with`, eval) resolves to undefined, which every caller treats as
 * "not proven".
 */
export type Binding =
  | { kind: 'variable'; decl: VariableDeclaration; element?: BindingElement; scope: Node }
  | { kind: 'parameter'; param: ParameterDeclaration; element?: BindingElement; scope: Node }
  | { kind: 'import'; decl: ImportDeclaration; imported: string; scope: Node }
  | { kind: 'namespace-import'; decl: ImportDeclaration; scope: Node }
  | { kind: 'declaration'; node: Node; scope: Node };

export function resolveName(from: Node, name: string): Binding | undefined {
  const sf = from.getSourceFile();
  for (let scope: ts.Node | undefined = from.compilerNode.parent; scope; scope = scope.parent) {
    const found = declaredIn(scope, name);
    if (found) return toBinding(sf, found, scope);
  }
  return undefined;
}

export function resolveIdentifier(id: Node): Binding | undefined {
  return resolveName(id, id.getText());
}

/** What declares a name, on the bare AST (wrapped only once found). */
type RawFound =
  | { kind: 'variable'; decl: ts.VariableDeclaration; element?: ts.BindingElement }
  | { kind: 'parameter'; param: ts.ParameterDeclaration; element?: ts.BindingElement }
  | { kind: 'import'; decl: ts.ImportDeclaration; imported: string }
  | { kind: 'namespace-import'; decl: ts.ImportDeclaration }
  | { kind: 'declaration'; node: ts.Node };

function toBinding(sf: SourceFile, found: RawFound, scope: ts.Node): Binding {
  const w = <T extends Node>(n: ts.Node): T => wrap<T>(sf, n);
  const scopeNode = w(scope);
  switch (found.kind) {
    case 'variable':
      return { kind: 'variable', decl: w<VariableDeclaration>(found.decl), ...(found.element ? { element: w<BindingElement>(found.element) } : {}), scope: scopeNode };
    case 'parameter':
      return { kind: 'parameter', param: w<ParameterDeclaration>(found.param), ...(found.element ? { element: w<BindingElement>(found.element) } : {}), scope: scopeNode };
    case 'import':
      return { kind: 'import', decl: w<ImportDeclaration>(found.decl), imported: found.imported, scope: scopeNode };
    case 'namespace-import':
      return { kind: 'namespace-import', decl: w<ImportDeclaration>(found.decl), scope: scopeNode };
    case 'declaration':
      return { kind: 'declaration', node: w(found.node), scope: scopeNode };
  }
}

function declaredIn(scope: ts.Node, name: string): RawFound | undefined {
  if (ts.isSourceFile(scope) || ts.isBlock(scope) || ts.isModuleBlock(scope) || ts.isCaseClause(scope) || ts.isDefaultClause(scope)) {
    for (const statement of scope.statements) {
      const found = declaredByStatement(statement, name);
      if (found) return found;
    }
    return undefined;
  }
  if (ts.isFunctionDeclaration(scope) || ts.isFunctionExpression(scope) || ts.isArrowFunction(scope) || ts.isMethodDeclaration(scope) || ts.isConstructorDeclaration(scope) || ts.isGetAccessorDeclaration(scope) || ts.isSetAccessorDeclaration(scope)) {
    for (const param of scope.parameters) {
      if (ts.isIdentifier(param.name)) {
        if (param.name.text === name) return { kind: 'parameter', param };
      } else {
        const element = findInPattern(param.name, name);
        if (element) return { kind: 'parameter', param, element };
      }
    }
    if (ts.isFunctionExpression(scope) && scope.name?.text === name) return { kind: 'declaration', node: scope };
    return undefined;
  }
  if (ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) {
    const init = scope.initializer;
    if (init && ts.isVariableDeclarationList(init)) {
      for (const decl of init.declarations) {
        const found = matchDeclaration(decl, name);
        if (found) return found;
      }
    }
    return undefined;
  }
  if (ts.isCatchClause(scope) && scope.variableDeclaration) return matchDeclaration(scope.variableDeclaration, name);
  return undefined;
}

function declaredByStatement(statement: ts.Statement, name: string): RawFound | undefined {
  if (ts.isVariableStatement(statement)) {
    for (const decl of statement.declarationList.declarations) {
      const found = matchDeclaration(decl, name);
      if (found) return found;
    }
    return undefined;
  }
  if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) {
    return statement.name?.text === name ? { kind: 'declaration', node: statement } : undefined;
  }
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    if (!clause) return undefined;
    if (clause.name?.text === name) return { kind: 'import', decl: statement, imported: 'default' };
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) {
      if (bindings.name.text === name) return { kind: 'namespace-import', decl: statement };
    } else if (bindings) {
      for (const spec of bindings.elements) {
        if (spec.name.text === name) return { kind: 'import', decl: statement, imported: (spec.propertyName ?? spec.name).text };
      }
    }
  }
  return undefined;
}

function matchDeclaration(decl: ts.VariableDeclaration, name: string): RawFound | undefined {
  if (ts.isIdentifier(decl.name)) return decl.name.text === name ? { kind: 'variable', decl } : undefined;
  const element = findInPattern(decl.name, name);
  return element ? { kind: 'variable', decl, element } : undefined;
}

function findInPattern(pattern: ts.BindingName, name: string): ts.BindingElement | undefined {
  if (!ts.isObjectBindingPattern(pattern) && !ts.isArrayBindingPattern(pattern)) return undefined;
  for (const element of pattern.elements) {
    if (!ts.isBindingElement(element)) continue;
    if (ts.isIdentifier(element.name)) {
      if (element.name.text === name) return element;
    } else {
      const inner = findInPattern(element.name, name);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** Identifiers that are references (not property names, not declaration names of other things). */
export function isReference(id: Node): boolean {
  const parent = id.getParent();
  if (!parent) return false;
  if (Node.isPropertyAccessExpression(parent) && parent.getNameNode() === id) return false;
  if (Node.isPropertyAssignment(parent) && parent.getNameNode() === id) return false;
  if (Node.isPropertySignature(parent) || Node.isPropertyDeclaration(parent) || Node.isMethodDeclaration(parent) || Node.isMethodSignature(parent)) {
    return (parent as { getNameNode(): Node }).getNameNode() !== id;
  }
  if (Node.isBindingElement(parent) && parent.getPropertyNameNode() === id) return false;
  if (Node.isImportSpecifier(parent) || Node.isExportSpecifier(parent)) return false;
  if (Node.isQualifiedName(parent) && parent.getRight() === id) return false;
  if (Node.isJsxAttribute(parent)) return false;
  if (Node.isLabeledStatement(parent) || Node.isBreakStatement(parent) || Node.isContinueStatement(parent)) return false;
  return true;
}

/** Every reference in `root` to the binding of `decl`'s name (resolved lexically). */
export function referencesTo(root: Node, name: string, matches: (binding: Binding | undefined) => boolean): Node[] {
  return identifiersNamed(root.getSourceFile(), name, root).filter((id) => isReference(id) && !isDeclarationName(id) && matches(resolveIdentifier(id)));
}

function isDeclarationName(id: Node): boolean {
  const parent = id.getParent();
  if (!parent) return false;
  if ((Node.isVariableDeclaration(parent) || Node.isParameterDeclaration(parent) || Node.isBindingElement(parent) || Node.isFunctionDeclaration(parent) || Node.isClassDeclaration(parent)) && parent.getNameNode() === id) return true;
  return false;
}

/** The binding a declaration's name creates, as resolveName would return it. */
export function sameVariable(decl: VariableDeclaration): (binding: Binding | undefined) => boolean {
  return (binding) => binding?.kind === 'variable' && binding.decl === decl && binding.element === undefined;
}

/** A name that is only a property key or member name (it binds nothing and shadows nothing). */
export function isPropertyName(id: Node): boolean {
  const parent = id.getParent();
  if (!parent) return false;
  if (Node.isPropertyAccessExpression(parent)) return parent.getNameNode() === id;
  if (Node.isPropertyAssignment(parent) || Node.isPropertySignature(parent) || Node.isPropertyDeclaration(parent) || Node.isMethodDeclaration(parent) || Node.isMethodSignature(parent) || Node.isGetAccessorDeclaration(parent) || Node.isSetAccessorDeclaration(parent)) {
    return (parent as unknown as { getNameNode(): Node }).getNameNode() === id;
  }
  if (Node.isBindingElement(parent)) return parent.getPropertyNameNode() === id;
  if (Node.isQualifiedName(parent)) return parent.getRight() === id;
  if (Node.isJsxAttribute(parent)) return true;
  return false;
}
