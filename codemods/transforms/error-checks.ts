import { Node, SyntaxKind } from 'ts-morph';
import { CLIENT_HELPER_MODULE } from '../mcp-imports.js';
import type { Transform } from './types.js';

/** Matchers that check an error's class: `expect(e).toBeInstanceOf(McpError)`, `.rejects.toThrow(McpError)`. */
const CLASS_MATCHERS = new Set(['toBeInstanceOf', 'toThrow', 'toThrowError']);

/**
 * After a file's calls moved to the client helper: every place that checks for the SDK's
 * McpError gets a marker, since the rewritten calls throw the helper's error classes.
 */
export const errorChecks: Transform = {
  name: 'error-checks',
  description: "marks checks for the SDK's McpError (instanceof, toBeInstanceOf, toThrow) in files whose calls now throw the helper's errors",
  triggers: ['McpError'],
  phase: 9,
  run(ctx) {
    if (!ctx.text.includes(CLIENT_HELPER_MODULE)) return;
    for (const binary of ctx.sourceFile.getDescendantsOfKind(SyntaxKind.BinaryExpression)) {
      if (binary.getOperatorToken().getKind() === SyntaxKind.InstanceOfKeyword && ctx.mcp.isSdkExport(binary.getRight(), 'McpError')) ctx.marker(binary, 'mcp-error-check');
    }
    for (const call of ctx.sourceFile.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee) || !CLASS_MATCHERS.has(callee.getName())) continue;
      if (ctx.mcp.isSdkExport(call.getArguments()[0], 'McpError')) ctx.marker(call, 'mcp-error-check');
    }
  },
};
