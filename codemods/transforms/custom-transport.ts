import { Node, SyntaxKind } from 'ts-morph';
import { LEGACY_METHODS, propertyValue } from '../mcp-calls.js';
import type { Transform } from './types.js';

/** Legacy task methods (tasks/* and the status notification): a JSON-RPC message naming one is a hand-made task request. */
const TASK_METHODS = new Set([...LEGACY_METHODS].filter((m) => m.startsWith('tasks/') || m.startsWith('notifications/tasks/')));

export const customTransport: Transform = {
  name: 'custom-transport',
  description: 'JSON-RPC messages built by hand ({ jsonrpc, method: "tasks/…" }) in a file that uses MCP: marked, rewrite them to TasksClient calls',
  triggers: ['jsonrpc'],
  run(ctx) {
    if (!ctx.facts.hasMcpImport) return;
    for (const obj of ctx.sourceFile.getDescendantsOfKind(SyntaxKind.ObjectLiteralExpression)) {
      if (!propertyValue(obj, 'jsonrpc')) continue;
      const method = propertyValue(obj, 'method');
      if (method && (Node.isStringLiteral(method) || Node.isNoSubstitutionTemplateLiteral(method)) && TASK_METHODS.has(method.getLiteralText())) ctx.marker(obj, 'custom-transport');
    }
  },
};
