import { Node, SyntaxKind, type SourceFile, type Type, type TypeChecker } from 'ts-morph';
import type { ReceiverKind } from './receiver-kind.js';

/** Calls whose receiver the codemod may rewrite or mark: the type checker is asked about these only. */
const RECEIVER_CALLS: ReadonlySet<string> = new Set([
  'callTool',
  'callToolStream',
  'cancelTask',
  'getTask',
  'getTaskResult',
  'listTasks',
  'notification',
  'request',
  'requestStream',
  'setNotificationHandler',
  'setRequestHandler',
]);

const SERVER_CLASSES: ReadonlySet<string> = new Set(['Server', 'McpServer']);

/** The same receiver written the same way anywhere in the file (`this.client`, `client!`, `client?.`) gets the same key. */
export function receiverKey(receiver: Node): string {
  return receiver.getText().replace(/\s+/g, '').replace(/[!?]|^\(+|\)+$/g, '');
}

/** `<receiver>.experimental.tasks.<m>(…)` → receiver; `<receiver>.<m>(…)` → receiver. */
export function receiverOfCall(callee: Node): Node | undefined {
  if (!Node.isPropertyAccessExpression(callee) || !RECEIVER_CALLS.has(callee.getName())) return undefined;
  const target = callee.getExpression();
  if (Node.isPropertyAccessExpression(target) && target.getName() === 'tasks') {
    const experimental = target.getExpression();
    if (Node.isPropertyAccessExpression(experimental) && experimental.getName() === 'experimental') return experimental.getExpression();
  }
  return target;
}

/**
 * Asks the type checker what each call receiver of the file is. Receivers written the same way
 * but typed differently (two `client`s in two scopes) are left out: the syntax decides for them.
 */
export function classifyReceivers(sf: SourceFile, checker: TypeChecker): Map<string, ReceiverKind> {
  const kinds = new Map<string, ReceiverKind>();
  const conflicting = new Set<string>();
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const receiver = receiverOfCall(call.getExpression());
    if (!receiver) continue;
    const key = receiverKey(receiver);
    if (conflicting.has(key)) continue;
    const kind = kindOfType(checker.getTypeAtLocation(receiver));
    if (kind === undefined) continue;
    const seen = kinds.get(key);
    if (seen !== undefined && seen !== kind) {
      kinds.delete(key);
      conflicting.add(key);
    } else {
      kinds.set(key, kind);
    }
  }
  return kinds;
}

/** Undefined when the checker cannot tell (an `any`, an unresolved import). */
export function kindOfType(type: Type): ReceiverKind | undefined {
  if (type.isAny() || type.isUnknown()) return undefined;
  const members = (type.isUnion() ? type.getUnionTypes() : [type]).filter((t) => !t.isUndefined() && !t.isNull());
  const kinds = new Set(members.map((t) => classKind(t, 0)));
  return kinds.size === 1 ? [...kinds][0] : undefined;
}

function classKind(type: Type, depth: number): ReceiverKind {
  const symbol = type.getSymbol() ?? type.getAliasSymbol();
  if (symbol) {
    const name = symbol.getName();
    if ((name === 'Client' || SERVER_CLASSES.has(name)) && symbol.getDeclarations().some((d) => isSdkFile(d.getSourceFile().getFilePath()))) return name === 'Client' ? 'client' : 'server';
  }
  if (depth < 4) {
    for (const base of type.getBaseTypes()) {
      const kind = classKind(base, depth + 1);
      if (kind !== 'other') return kind;
    }
  }
  return 'other';
}

function isSdkFile(path: string): boolean {
  return path.includes('/@modelcontextprotocol/sdk/');
}
