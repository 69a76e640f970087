import { Node, SyntaxKind, type ClassDeclaration, type ClassExpression, type Expression, type FunctionDeclaration } from 'ts-morph';
import type { McpResolver } from './mcp-imports.js';
import type { ReceiverKind } from './receiver-kind.js';
import { resolveIdentifier } from './scope.js';

/** SDK classes whose values are servers: their task calls and notifications are never touched. */
const SERVER_CLASSES = ['Server', 'McpServer'] as const;

const MAX_DEPTH = 6;

/**
 * The syntactic proof of a receiver's kind when no type checker is at hand: a variable or
 * parameter typed with the SDK class (`Client`, `Client | undefined`), initialised or assigned
 * with `new Client(…)`, a class property (`this.client`) declared or assigned so, the return
 * value of a local function that is declared to return or returns one, or `mcpServer.server`.
 */
export function syntacticKind(receiver: Node, mcp: McpResolver, depth = 0): ReceiverKind | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const node = unwrap(receiver);
  if (Node.isIdentifier(node)) return identifierKind(node, mcp, depth);
  if (Node.isPropertyAccessExpression(node)) {
    const base = unwrap(node.getExpression());
    if (base.getKind() === SyntaxKind.ThisKeyword) return memberKind(node.getName(), base, mcp, depth);
    if (node.getName() === 'server' && syntacticKind(base, mcp, depth + 1) === 'server') return 'server';
    if (Node.isIdentifier(base)) return typeLiteralMemberKind(base, node.getName(), mcp);
    return undefined;
  }
  if (Node.isCallExpression(node)) {
    const callee = unwrap(node.getExpression());
    if (!Node.isIdentifier(callee)) return undefined;
    const binding = resolveIdentifier(callee);
    if (binding?.kind === 'declaration' && Node.isFunctionDeclaration(binding.node)) return returnKind(binding.node, mcp, depth);
    return undefined;
  }
  return undefined;
}

function unwrap(node: Node): Node {
  let cur = node;
  while (Node.isParenthesizedExpression(cur) || Node.isNonNullExpression(cur) || Node.isAsExpression(cur) || Node.isAwaitExpression(cur)) cur = cur.getExpression();
  return cur;
}

function identifierKind(id: Node, mcp: McpResolver, depth: number): ReceiverKind | undefined {
  const binding = resolveIdentifier(id);
  if (binding?.kind === 'parameter' && !binding.element) return typeNodeKind(binding.param.getTypeNode(), mcp);
  if (binding?.kind !== 'variable' || binding.element) return undefined;
  const typed = typeNodeKind(binding.decl.getTypeNode(), mcp);
  if (typed) return typed;
  const init = binding.decl.getInitializer();
  if (init && !isNullishValue(init)) return valueKind(init, mcp, depth);
  // `let client;` assigned later (e.g. in connect()): every assignment must agree.
  const name = binding.decl.getName();
  const assigned = binding.decl
    .getSourceFile()
    .getDescendantsOfKind(SyntaxKind.BinaryExpression)
    .filter((b) => b.getOperatorToken().getKind() === SyntaxKind.EqualsToken && Node.isIdentifier(b.getLeft()) && b.getLeft().getText() === name && resolveIdentifier(b.getLeft())?.kind === 'variable')
    .filter((b) => {
      const target = resolveIdentifier(b.getLeft());
      return target?.kind === 'variable' && target.decl === binding.decl;
    })
    .map((b) => valueKind(b.getRight(), mcp, depth));
  return agreed(assigned);
}

/** `this.<name>` inside a class: its property declaration, constructor parameter property, or assignments. */
function memberKind(name: string, thisNode: Node, mcp: McpResolver, depth: number): ReceiverKind | undefined {
  const cls = thisNode.getFirstAncestor((a) => Node.isClassDeclaration(a) || Node.isClassExpression(a)) as ClassDeclaration | ClassExpression | undefined;
  if (!cls) return undefined;
  const prop = cls.getProperty(name);
  if (prop) {
    const typed = typeNodeKind(prop.getTypeNode(), mcp);
    if (typed) return typed;
    const init = prop.getInitializer();
    if (init && !isNullishValue(init)) {
      const kind = valueKind(init, mcp, depth);
      if (kind) return kind;
    }
  }
  for (const ctor of cls.getConstructors()) {
    const param = ctor.getParameters().find((p) => p.isParameterProperty() && p.getName() === name);
    if (param) return typeNodeKind(param.getTypeNode(), mcp);
  }
  const assigned = cls
    .getDescendantsOfKind(SyntaxKind.BinaryExpression)
    .filter((b) => {
      if (b.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return false;
      const left = b.getLeft();
      return Node.isPropertyAccessExpression(left) && left.getName() === name && left.getExpression().getKind() === SyntaxKind.ThisKeyword;
    })
    .map((b) => valueKind(b.getRight(), mcp, depth));
  return agreed(assigned);
}

/** `holder.client` where `holder: { client: Client }`. */
function typeLiteralMemberKind(base: Node, name: string, mcp: McpResolver): ReceiverKind | undefined {
  const binding = resolveIdentifier(base);
  const typeNode = binding?.kind === 'parameter' && !binding.element ? binding.param.getTypeNode() : binding?.kind === 'variable' && !binding.element ? binding.decl.getTypeNode() : undefined;
  if (!typeNode || !Node.isTypeLiteral(typeNode)) return undefined;
  const member = typeNode.getProperty(name);
  return member ? typeNodeKind(member.getTypeNode(), mcp) : undefined;
}

function returnKind(fn: FunctionDeclaration, mcp: McpResolver, depth: number): ReceiverKind | undefined {
  const declared = typeNodeKind(fn.getReturnTypeNode(), mcp);
  if (declared) return declared;
  const returns = fn.getDescendantsOfKind(SyntaxKind.ReturnStatement).filter((r) => r.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a)) === fn);
  return agreed(returns.map((r) => {
    const value = r.getExpression();
    return value ? valueKind(value, mcp, depth) : undefined;
  }));
}

function valueKind(value: Expression, mcp: McpResolver, depth: number): ReceiverKind | undefined {
  const node = unwrap(value);
  if (Node.isNewExpression(node)) {
    if (mcp.isNewOf(node, 'Client')) return 'client';
    if (SERVER_CLASSES.some((c) => mcp.isNewOf(node, c))) return 'server';
    return undefined;
  }
  if (Node.isIdentifier(node) || Node.isCallExpression(node) || Node.isPropertyAccessExpression(node)) return syntacticKind(node, mcp, depth + 1);
  return undefined;
}

/** `Client`, `Client | undefined`, `Client | null`, `Promise<Client>` (an async helper's return type). */
function typeNodeKind(type: Node | undefined, mcp: McpResolver): ReceiverKind | undefined {
  if (!type) return undefined;
  if (Node.isParenthesizedTypeNode(type)) return typeNodeKind(type.getTypeNode(), mcp);
  if (Node.isUnionTypeNode(type)) {
    const members = type.getTypeNodes().filter((t) => !isNullish(t));
    return members.length === 1 ? typeNodeKind(members[0], mcp) : undefined;
  }
  if (!Node.isTypeReference(type)) return undefined;
  if (mcp.isSdkTypeReference(type, 'Client')) return 'client';
  if (SERVER_CLASSES.some((c) => mcp.isSdkTypeReference(type, c))) return 'server';
  if (type.getTypeName().getText() === 'Promise') {
    const [arg] = type.getTypeArguments();
    return typeNodeKind(arg, mcp);
  }
  return undefined;
}

function isNullish(type: Node): boolean {
  if (type.getKind() === SyntaxKind.UndefinedKeyword || type.getKind() === SyntaxKind.NullKeyword) return true;
  return Node.isLiteralTypeNode(type) && type.getLiteral().getKind() === SyntaxKind.NullKeyword;
}

function isNullishValue(value: Node): boolean {
  return Node.isNullLiteral(value) || (Node.isIdentifier(value) && value.getText() === 'undefined');
}

function agreed(kinds: Array<ReceiverKind | undefined>): ReceiverKind | undefined {
  if (kinds.length === 0) return undefined;
  const first = kinds[0];
  return kinds.every((k) => k === first) ? first : undefined;
}

/** A receiver whose name says it is a server (`server`, `mcpServer`, `this.server`): never given a client marker on a guess. */
export function looksLikeServer(receiver: Node): boolean {
  const node = unwrap(receiver);
  const name = Node.isIdentifier(node) ? node.getText() : Node.isPropertyAccessExpression(node) ? node.getName() : '';
  return /server$/i.test(name);
}
