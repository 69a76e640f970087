import { Node, SyntaxKind, ts, type CallExpression, type PropertyAccessExpression, type StringLiteral, type VariableDeclaration } from 'ts-morph';
import { callsNamed, nodesOfKind } from '../raw.js';
import { expressionAt, semi } from '../codegen.js';
import { resolveClient, statementOf } from '../mcp-calls.js';
import { looksLikeServer } from '../receivers.js';
import { isReference, resolveIdentifier } from '../scope.js';
import { indentationAt } from '../text.js';
import { paramName, readsOf } from './callbacks.js';
import { addProperty } from './shared.js';
import type { Transform, TransformContext } from './types.js';

/** TasksClient methods that drive a task, and where their options go. */
const DRIVERS: Record<string, number> = { callTool: 2, waitForTask: 1, resumeAll: 0 };

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['setNotificationHandler']);

export const taskStatusNotifications: Transform = {
  name: 'task-status-notifications',
  description: 'client.setNotificationHandler(TaskStatusNotificationSchema, handler) → a const onTaskStatus passed as onStatus to the calls that drive tasks',
  triggers: ['TaskStatusNotificationSchema', 'notifications/tasks/status'],
  phase: 2,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'setNotificationHandler') continue;
      const [schema, handler] = call.getArguments();
      const client = resolveClient(callee.getExpression(), ctx.mcp);
      if (!handler || client.kind === 'unknown' || client.kind === 'server') continue;
      if (!ctx.mcp.isSdkExport(schema, 'TaskStatusNotificationSchema')) {
        if (schema && schema.getText().includes('notifications/tasks/status')) ctx.marker(call, 'status-notifications');
        continue;
      }
      if (client.kind !== 'constructed' || !rewrite(ctx, call, handler, client.decl)) ctx.marker(call, 'status-notifications');
    }
    // A hand-written check of the method name (fallbackNotificationHandler, a custom schema) in an MCP file.
    if (ctx.facts.hasMcpImport) {
      for (const lit of nodesOfKind<StringLiteral>(ctx.sourceFile, SyntaxKind.StringLiteral, ctx.sourceFile, (n) => (n as ts.StringLiteral).text === 'notifications/tasks/status')) {
        const inHandled = lit.getFirstAncestor((a) => Node.isCallExpression(a) && a.getExpression().getText().endsWith('setNotificationHandler'));
        if (!inHandled && isMethodCheck(lit) && !isSentByServer(ctx, lit)) ctx.marker(lit, 'status-notifications');
      }
    }
  },
};

function rewrite(ctx: TransformContext, call: CallExpression, handler: Node, clientDecl: VariableDeclaration): boolean {
  const statement = statementOf(call);
  if (!statement || !Node.isExpressionStatement(statement) || statement.getExpression() !== call) return false;
  if (!Node.isArrowFunction(handler) && !Node.isFunctionExpression(handler)) return false;
  const params = handler.getParameters();
  if (params.length > 1) return false;
  const tcDecl = ctx.existingTasksClient(clientDecl);
  if (!tcDecl) return false;
  const drivers = driverCalls(ctx, tcDecl, statement);
  if (drivers.length === 0) return false;

  const body = handler.getBody();
  const bodyNodes = Node.isBlock(body) ? body.getStatements() : [body];
  let edits: Array<{ start: number; end: number; text: string }> = [];
  let param = paramName('task', bodyNodes);
  const notification = params[0];
  if (notification) {
    const nameNode = notification.getNameNode();
    if (!Node.isIdentifier(nameNode)) return false;
    const isNotification = (n: Node): boolean => {
      if (!Node.isIdentifier(n) || n.getText() !== nameNode.getText() || !isReference(n)) return false;
      const b = resolveIdentifier(n);
      return b?.kind === 'parameter' && b.param === notification;
    };
    const reads = readsOf(bodyNodes, isNotification);
    if (reads.some((r) => r.prop !== 'params')) return false;
    edits = reads.map((r) => ({ start: r.access!.getStart(), end: r.access!.getEnd(), text: param }));
  } else {
    param = '';
  }
  if (!ctx.isFree(statement.getStart(), statement.getEnd())) return false;
  const indent = indentationAt(ctx.text, statement.getStart());
  const name = ctx.fresh('onTaskStatus', statement);
  const typed = ctx.isTypeScript && param ? `${param}: TaskStatusUpdate` : param;
  if (ctx.isTypeScript && param) ctx.importFromHelper([], ['TaskStatusUpdate']);
  const bodyText = expressionAt(ctx.sourceFile, ctx.text, body, indent, edits);
  const decl = `const ${name} = ${handler.isAsync() ? 'async ' : ''}(${typed}) => ${bodyText}${semi(ctx.style)}`;
  if (!ctx.replaceNode(statement, decl)) return false;
  for (const driver of drivers) wire(ctx, driver, name);
  ctx.rewrote(call);
  return true;
}

/** Calls of the TasksClient that drive tasks, after `after` and in its block. */
function driverCalls(ctx: TransformContext, tcDecl: VariableDeclaration, after: Node): CallExpression[] {
  const block = after.getParentOrThrow();
  return callsNamed(ctx.sourceFile, new Set(Object.keys(DRIVERS)), block).filter((c) => {
    const callee = c.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || DRIVERS[callee.getName()] === undefined || c.getStart() < after.getEnd()) return false;
    const receiver = callee.getExpression();
    if (!Node.isIdentifier(receiver)) return false;
    const b = resolveIdentifier(receiver);
    return b?.kind === 'variable' && b.decl === tcDecl && ctx.isFree(c.getStart(), c.getEnd());
  });
}

/** Adds `onStatus: name` to a driving call's options (or calls `name` first in an existing onStatus). */
function wire(ctx: TransformContext, call: CallExpression, name: string): void {
  const method = (call.getExpression() as import('ts-morph').PropertyAccessExpression).getName();
  const index = DRIVERS[method]!;
  const args = call.getArguments();
  const options = args[index];
  if (!options) {
    const filler = method === 'callTool' && args.length < 2 ? (args.length === 1 ? ', {}' : '') : '';
    const last = args[args.length - 1];
    const at = last ? last.getEnd() : call.getEnd() - 1;
    ctx.edit(at, at, `${last ? `${filler}, ` : ''}{ onStatus: ${name} }`);
    return;
  }
  if (!Node.isObjectLiteralExpression(options)) {
    ctx.marker(call, 'status-notifications');
    return;
  }
  const existing = options.getProperty('onStatus');
  if (!existing) {
    addProperty(ctx, options, `onStatus: ${name}`);
    return;
  }
  const value = Node.isPropertyAssignment(existing) ? existing.getInitializer() : undefined;
  if (value && (Node.isArrowFunction(value) || Node.isFunctionExpression(value))) {
    const body = value.getBody();
    const param = value.getParameters()[0]?.getNameNode();
    if (Node.isBlock(body) && param && Node.isIdentifier(param)) {
      const first = body.getStatements()[0];
      const indent = first ? indentationAt(ctx.text, first.getStart()) : indentationAt(ctx.text, body.getStart()) + ctx.style.indent;
      ctx.edit(body.getStart() + 1, body.getStart() + 1, `\n${indent}${name}(${param.getText()})${semi(ctx.style)}`);
      return;
    }
  }
  ctx.marker(call, 'status-notifications');
}

/**
 * The method name compared (`n.method === '…'`, a `case`) or matched by a schema (`z.literal('…')`):
 * code that receives the notification. A `method: '…'` property or a constant builds one to send.
 */
function isMethodCheck(lit: Node): boolean {
  let node = lit;
  for (let parent = node.getParent(); parent && (Node.isAsExpression(parent) || Node.isParenthesizedExpression(parent)); parent = node.getParent()) node = parent;
  const parent = node.getParent();
  if (!parent) return false;
  if (Node.isBinaryExpression(parent)) return [SyntaxKind.EqualsEqualsEqualsToken, SyntaxKind.ExclamationEqualsEqualsToken, SyntaxKind.EqualsEqualsToken, SyntaxKind.ExclamationEqualsToken].includes(parent.getOperatorToken().getKind());
  return Node.isCaseClause(parent) || Node.isCallExpression(parent);
}

/** An outgoing `server.notification({ method: 'notifications/tasks/status' })`: server code, never marked. */
function isSentByServer(ctx: TransformContext, lit: Node): boolean {
  const call = lit.getFirstAncestor((a) => Node.isCallExpression(a) && Node.isPropertyAccessExpression(a.getExpression()) && ['notification', 'sendNotification'].includes((a.getExpression() as PropertyAccessExpression).getName()));
  if (!call || !Node.isCallExpression(call)) return false;
  const receiver = (call.getExpression() as PropertyAccessExpression).getExpression();
  const kind = resolveClient(receiver, ctx.mcp).kind;
  return kind === 'server' || (kind === 'unknown' && looksLikeServer(receiver));
}
