import { Node, SyntaxKind, ts, type ObjectLiteralExpression } from 'ts-morph';
import { nodesOfKind } from '../raw.js';
import { LEGACY_METHODS, propertyValue } from '../mcp-calls.js';
import type { Transform } from './types.js';

/** Legacy task methods (tasks/* and the status notification): a JSON-RPC message naming one is a hand-made task request. */
const TASK_METHODS = new Set([...LEGACY_METHODS].filter((m) => m.startsWith('tasks/') || m.startsWith('notifications/tasks/')));

export const customTransport: Transform = {
  name: 'custom-transport',
  description: 'JSON-RPC messages built by hand ({ jsonrpc, method: "tasks/…" }) in a file that uses MCP: marked, rewrite them to TasksClient calls',
  triggers: ['jsonrpc'],
  phase: 1,
  run(ctx) {
    if (!ctx.facts.hasMcpImport) return;
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
