import {
  Node,
  SyntaxKind,
  type BindingElement,
  type ImportDeclaration,
  type ParameterDeclaration,
  type VariableDeclaration,
} from 'ts-morph';

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
  for (let scope: Node | undefined = from.getParent(); scope; scope = scope.getParent()) {
    const found = declaredIn(scope, name);
    if (found) return found;
  }
  return undefined;
}

export function resolveIdentifier(id: Node): Binding | undefined {
  return resolveName(id, id.getText());
}

function declaredIn(scope: Node, name: string): Binding | undefined {
  if (Node.isSourceFile(scope) || Node.isBlock(scope) || Node.isModuleBlock(scope) || Node.isCaseClause(scope) || Node.isDefaultClause(scope)) {
    for (const statement of scope.getStatements()) {
      const found = declaredByStatement(statement, name, scope);
      if (found) return found;
    }
    return undefined;
  }
  if (Node.isFunctionDeclaration(scope) || Node.isFunctionExpression(scope) || Node.isArrowFunction(scope) || Node.isMethodDeclaration(scope) || Node.isConstructorDeclaration(scope) || Node.isGetAccessorDeclaration(scope) || Node.isSetAccessorDeclaration(scope)) {
    for (const param of scope.getParameters()) {
      const nameNode = param.getNameNode();
      if (Node.isIdentifier(nameNode)) {
        if (nameNode.getText() === name) return { kind: 'parameter', param, scope };
      } else {
        const element = findInPattern(nameNode, name);
        if (element) return { kind: 'parameter', param, element, scope };
      }
    }
    if (Node.isFunctionExpression(scope) && scope.getName() === name) return { kind: 'declaration', node: scope, scope };
    return undefined;
  }
  if (Node.isForStatement(scope) || Node.isForOfStatement(scope) || Node.isForInStatement(scope)) {
    const init = scope.getInitializer();
    if (init && Node.isVariableDeclarationList(init)) {
      for (const decl of init.getDeclarations()) {
        const found = matchDeclaration(decl, name, scope);
        if (found) return found;
      }
    }
    return undefined;
  }
  if (Node.isCatchClause(scope)) {
    const decl = scope.getVariableDeclaration();
    if (decl) return matchDeclaration(decl, name, scope);
  }
  return undefined;
}

function declaredByStatement(statement: Node, name: string, scope: Node): Binding | undefined {
  if (Node.isVariableStatement(statement)) {
    for (const decl of statement.getDeclarations()) {
      const found = matchDeclaration(decl, name, scope);
      if (found) return found;
    }
    return undefined;
  }
  if (Node.isFunctionDeclaration(statement) || Node.isClassDeclaration(statement) || Node.isEnumDeclaration(statement)) {
    return statement.getName() === name ? { kind: 'declaration', node: statement, scope } : undefined;
  }
  if (Node.isImportDeclaration(statement)) {
    const clause = statement.getImportClause();
    if (!clause) return undefined;
    if (clause.getDefaultImport()?.getText() === name) return { kind: 'import', decl: statement, imported: 'default', scope };
    const bindings = clause.getNamedBindings();
    if (bindings && Node.isNamespaceImport(bindings)) {
      if (bindings.getName() === name) return { kind: 'namespace-import', decl: statement, scope };
    } else if (bindings) {
      for (const spec of bindings.getElements()) {
        const local = spec.getAliasNode()?.getText() ?? spec.getName();
        if (local === name) return { kind: 'import', decl: statement, imported: spec.getName(), scope };
      }
    }
    return undefined;
  }
  if (Node.isExportDeclaration(statement) || Node.isExpressionStatement(statement)) return undefined;
  return undefined;
}

function matchDeclaration(decl: VariableDeclaration, name: string, scope: Node): Binding | undefined {
  const nameNode = decl.getNameNode();
  if (Node.isIdentifier(nameNode)) return nameNode.getText() === name ? { kind: 'variable', decl, scope } : undefined;
  const element = findInPattern(nameNode, name);
  return element ? { kind: 'variable', decl, element, scope } : undefined;
}

function findInPattern(pattern: Node, name: string): BindingElement | undefined {
  if (!Node.isObjectBindingPattern(pattern) && !Node.isArrayBindingPattern(pattern)) return undefined;
  for (const element of pattern.getElements()) {
    if (!Node.isBindingElement(element)) continue;
    const nameNode = element.getNameNode();
    if (Node.isIdentifier(nameNode)) {
      if (nameNode.getText() === name) return element;
    } else {
      const inner = findInPattern(nameNode, name);
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
  return root
    .getDescendantsOfKind(SyntaxKind.Identifier)
    .filter((id) => id.getText() === name && isReference(id) && !isDeclarationName(id) && matches(resolveIdentifier(id)));
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
