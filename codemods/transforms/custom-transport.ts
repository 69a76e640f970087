import { Node, SyntaxKind, ts, type ObjectLiteralExpression } from 'ts-morph';
import { callsNamed, nodesOfKind } from '../raw.js';
import { LEGACY_METHODS, propertyValue, resolveClient } from '../mcp-calls.js';
import { resolveIdentifier } from '../scope.js';
import type { Transform, TransformContext } from './types.js';

/** The SDK's request types of the legacy task methods: a method typed `GetTaskRequest['method']` is one of them. */
const TASK_REQUEST_TYPES = ['GetTaskRequest', 'GetTaskPayloadRequest', 'CancelTaskRequest', 'ListTasksRequest'];

/** Legacy task methods (tasks/* and the status notification): a JSON-RPC message naming one is a hand-made task request. */
const TASK_METHODS = new Set([...LEGACY_METHODS].filter((m) => m.startsWith('tasks/') || m.startsWith('notifications/tasks/')));

export const customTransport: Transform = {
  name: 'custom-transport',
  description: 'JSON-RPC messages built by hand ({ jsonrpc, method: "tasks/…" }) and client requests forwarding a tasks/* method chosen at run time, in a file that uses MCP: marked, rewrite them to TasksClient calls',
  triggers: ['jsonrpc', ...TASK_REQUEST_TYPES],
  phase: 1,
  run(ctx) {
    if (!ctx.facts.hasMcpImport) return;
    markForwardedRequests(ctx);
    const messages = nodesOfKind<ObjectLiteralExpression>(ctx.sourceFile, SyntaxKind.ObjectLiteralExpression, ctx.sourceFile, (n) =>
      (n as ts.ObjectLiteralExpression).properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'jsonrpc'),
    );
    for (const obj of messages) {
      if (!propertyValue(obj, 'jsonrpc')) continue;
      const method = propertyValue(obj, 'method');
      if (method && (Node.isStringLiteral(method) || Node.isNoSubstitutionTemplateLiteral(method)) && TASK_METHODS.has(method.getLiteralText())) ctx.marker(obj, 'custom-transport');
    }
  },
};

/**
 * `client.request({ method, params }, schema)` where `method` is a parameter or variable typed as a
 * legacy task request's method (a proxy forwarding tasks/get, tasks/result, tasks/cancel): no one
 * rewrite fits every method it may carry.
 */
function markForwardedRequests(ctx: TransformContext): void {
  for (const call of callsNamed(ctx.sourceFile, new Set(['request']))) {
    const callee = call.getExpression();
    const request = call.getArguments()[0];
    if (!Node.isPropertyAccessExpression(callee) || !request || !Node.isObjectLiteralExpression(request)) continue;
    const method = propertyValue(request, 'method');
    if (!method || !Node.isIdentifier(method) || !typedAsTaskMethod(ctx, method)) continue;
    if (resolveClient(callee.getExpression(), ctx.mcp).kind === 'server') continue;
    ctx.marker(call, 'custom-transport');
  }
}

/** Declared with a type such as `GetTaskRequest['method'] | CancelTaskRequest['method']` (the SDK's types). */
function typedAsTaskMethod(ctx: TransformContext, id: Node): boolean {
  const binding = resolveIdentifier(id);
  const declared = binding?.kind === 'parameter' ? binding.param : binding?.kind === 'variable' ? binding.decl : undefined;
  const type = declared?.getTypeNode();
  if (!type) return false;
  const accesses = [...(Node.isIndexedAccessTypeNode(type) ? [type] : []), ...type.getDescendantsOfKind(SyntaxKind.IndexedAccessType)];
  return accesses.some((t) => TASK_REQUEST_TYPES.some((name) => ctx.mcp.isSdkTypeReference(t.getObjectTypeNode(), name)));
}
