import { Node, SyntaxKind } from 'ts-morph';
import { containsAwait, identifierTexts, statementsAt, unusedName } from '../codegen.js';
import type { Edit } from '../edits.js';
import { CLIENT_HELPER_MODULE } from '../mcp-imports.js';
import type { TransformContext } from './types.js';

/** A piece of old code that becomes the body of a callback or a branch, with the replacements inside it. */
export interface MovedCode {
  statements: Node[];
  edits: Edit[];
}

/** `(param) => {\n<statements>\n<indent>}`, async when the statements await. */
export function arrowCallback(ctx: TransformContext, param: string, code: MovedCode, indent: string): string {
  const body = statementsAt(ctx.sourceFile, ctx.text, code.statements, indent + ctx.style.indent, code.edits);
  return `${containsAwait(code.statements) ? 'async ' : ''}(${param}) => {\n${body}\n${indent}}`;
}

/** A parameter name for a callback made of `statements` that shadows nothing they use. */
export function paramName(base: string, statements: readonly Node[]): string {
  return unusedName(base, identifierTexts(statements));
}

/** What to write for an old `error` value that is now a caught exception. */
export function caughtErrorRef(ctx: TransformContext, errorName: string, use: Node): string {
  if (!ctx.isTypeScript) return errorName;
  const parent = use.getParent();
  const prop = parent && Node.isPropertyAccessExpression(parent) && parent.getExpression() === use ? parent.getName() : undefined;
  // The old value was the SDK's McpError: the caught one is `unknown`, which fits nowhere it went.
  if (prop === undefined) return isPassedOn(use) ? `(${errorName} as ${ctx.importSdkType('McpError', '@modelcontextprotocol/sdk/types.js')})` : errorName;
  if (prop === 'message' || prop === 'name' || prop === 'stack') return `(${errorName} as Error)`;
  return `(${errorName} as Error & { code?: number; data?: unknown })`;
}

/** The error is stored, returned, passed or assigned (not thrown, not compared). */
function isPassedOn(use: Node): boolean {
  const parent = use.getParent();
  if (!parent) return false;
  if (Node.isThrowStatement(parent)) return false;
  if (Node.isBinaryExpression(parent) && parent.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return false;
  return true;
}

/** Property reads `<id>.<prop>` of the variable `id` resolves to, in `statements`. */
export function readsOf(statements: readonly Node[], matches: (id: Node) => boolean): Array<{ id: Node; access: Node | undefined; prop: string | undefined }> {
  const out: Array<{ id: Node; access: Node | undefined; prop: string | undefined }> = [];
  for (const st of statements) {
    const ids = Node.isIdentifier(st) ? [st] : st.getDescendantsOfKind(SyntaxKind.Identifier);
    for (const id of ids) {
      if (!matches(id)) continue;
      const parent = id.getParent();
      if (parent && Node.isPropertyAccessExpression(parent) && parent.getExpression() === id) out.push({ id, access: parent, prop: parent.getName() });
      else out.push({ id, access: undefined, prop: undefined });
    }
  }
  return out;
}

/**
 * The TypeScript type of callTool's result: the helper's CallToolResult, or (when the file
 * already has another CallToolResult, e.g. the SDK's) the same type spelt through TasksClient.
 */
export function resultType(ctx: TransformContext): string {
  const clash = ctx.sourceFile.getImportDeclarations().some(
    (d) => d.getModuleSpecifierValue() !== CLIENT_HELPER_MODULE && d.getNamedImports().some((n) => (n.getAliasNode()?.getText() ?? n.getName()) === 'CallToolResult'),
  );
  if (clash) return "Awaited<ReturnType<TasksClient['callTool']>>";
  ctx.importFromHelper([], ['CallToolResult']);
  return 'CallToolResult';
}

/** The SDK's type for what the old API returned (callToolStream results, getTaskResult): old code keeps type-checking. */
export function sdkResultType(ctx: TransformContext, schema: Node | undefined): string {
  const compat = ctx.mcp.isSdkExport(schema, 'CompatibilityCallToolResultSchema');
  return ctx.importSdkType(compat ? 'CompatibilityCallToolResult' : 'CallToolResult', SDK_TYPES_MODULE);
}

export const SDK_TYPES_MODULE = '@modelcontextprotocol/sdk/types.js';
