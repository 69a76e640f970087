import { Node, SyntaxKind, type ObjectLiteralExpression } from 'ts-morph';
import { indentationAt } from '../text.js';
import { expressionAt } from '../codegen.js';
import { plainPropertyNames, propertyValue, resolveClient } from '../mcp-calls.js';
import { looksLikeServer } from '../receivers.js';
import type { TransformContext } from './types.js';

/** A trigger for transforms of raw requests: the method may be a constant the text does not spell. */
export const RAW_REQUEST = '.request(';

/** Methods whose names only MCP task clients use, so an untraceable receiver still deserves a marker. */
const MCP_ONLY_METHODS = new Set(['tasks/create', 'tasks/status', 'tasks/result']);

/**
 * The TasksClient to call instead of the SDK client `receiver`, at `site`: the one built next to
 * `new Client(…)` of this file, else `tasksClientFor(<receiver>)` for a client proven to be one
 * (by the type checker or the syntax). Undefined when the call must stay: a marker has been left
 * when the receiver is MCP but cannot be migrated here, nothing when it is not provably a client.
 */
export function tasksClientAt(ctx: TransformContext, receiver: Node, site: Node, opts: { mcpOnly: boolean }): string | undefined {
  const ref = resolveClient(receiver, ctx.mcp);
  if (ref.kind === 'constructed') {
    const name = ctx.tasksClientFor(ref.decl, site);
    if (name) return name;
  }
  if (ref.kind === 'constructed' || ref.kind === 'proven') {
    if (!Node.isExpression(receiver) || hasOptionalChain(receiver, site)) {
      ctx.marker(site, 'unresolved-client');
      return undefined;
    }
    ctx.importFromHelper(['tasksClientFor']);
    return `tasksClientFor(${receiver.getText()})`;
  }
  if (ref.kind === 'unknown' && opts.mcpOnly && ctx.facts.hasMcpImport && !looksLikeServer(receiver)) ctx.marker(site, 'unresolved-client');
  return undefined;
}

/** `client?.experimental.tasks.getTask(…)`: the rewrite would drop the `undefined` case. */
function hasOptionalChain(receiver: Node, site: Node): boolean {
  for (let cur: Node | undefined = receiver.getParent(); cur && cur !== site.getParent(); cur = cur.getParent()) {
    if ((Node.isPropertyAccessExpression(cur) || Node.isCallExpression(cur)) && cur.hasQuestionDotToken()) return true;
  }
  return false;
}

/** The receiver is an MCP client, or an untraceable one calling an MCP-only API in a file that uses MCP (never a server). */
export function isMcpReceiver(ctx: TransformContext, receiver: Node, opts: { mcpOnly: boolean }): boolean {
  const kind = resolveClient(receiver, ctx.mcp).kind;
  if (kind === 'server') return false;
  return kind !== 'unknown' || (opts.mcpOnly && ctx.facts.hasMcpImport && !looksLikeServer(receiver));
}

export function isMcpOnlyMethod(method: string): boolean {
  return MCP_ONLY_METHODS.has(method);
}

/** The `taskId` expression of `{ taskId: X }` / `{ taskId }` params, when that is all they hold. */
export function taskIdParam(params: Node | undefined): Node | undefined {
  if (!params || !Node.isObjectLiteralExpression(params)) return undefined;
  const props = params.getProperties();
  if (props.length !== 1) return undefined;
  const prop = props[0]!;
  if (Node.isPropertyAssignment(prop) && prop.getName() === 'taskId') return prop.getInitializer();
  if (Node.isShorthandPropertyAssignment(prop) && prop.getName() === 'taskId') return prop.getNameNode();
  return undefined;
}

/**
 * Adds `text` (e.g. `onStatus: handler`) as the last property of an object literal: on its own
 * line at `indent` when the literal spans lines, inline otherwise.
 */
export function addProperty(ctx: TransformContext, obj: ObjectLiteralExpression, text: string, indent?: string): boolean {
  const props = obj.getProperties();
  const last = props[props.length - 1];
  const close = obj.getEnd() - 1;
  const multiline = ctx.text.slice(obj.getStart(), obj.getEnd()).includes('\n');
  if (!last) return ctx.edit(obj.getStart() + 1, close, multiline ? `\n${indent ?? indentationAt(ctx.text, obj.getStart()) + ctx.style.indent}${text},\n${indentationAt(ctx.text, obj.getStart())}` : ` ${text} `);
  const after = ctx.text.slice(last.getEnd(), close);
  const hasComma = after.trimStart().startsWith(',');
  const at = hasComma ? last.getEnd() + after.indexOf(',') + 1 : last.getEnd();
  if (!multiline) return ctx.edit(at, at, `${hasComma ? '' : ','} ${text}${hasComma ? ',' : ''}`);
  const propIndent = indent ?? indentationAt(ctx.text, last.getStart());
  return ctx.edit(at, at, `${hasComma ? '' : ','}\n${propIndent}${text}${hasComma ? ',' : ''}`);
}

/** The tool name and arguments of a tools/call's params, as code (`task` is dropped: the server decides). */
export interface ToolCallTarget {
  name: string;
  args: string | undefined;
}

export function toolCallTarget(ctx: TransformContext, call: Node, params: Node): ToolCallTarget | undefined {
  if (isPlainReference(params)) {
    // `params as CallToolRequest['params']` keeps its cast: the parentheses make `.name` read the cast value.
    const base = Node.isIdentifier(params) || Node.isPropertyAccessExpression(params) ? params.getText() : `(${params.getText()})`;
    return { name: `${base}.name`, args: `${base}.arguments` };
  }
  if (!Node.isObjectLiteralExpression(params)) return undefined;
  const names = plainPropertyNames(params);
  if (!names || names.some((n) => n !== 'name' && n !== 'arguments' && n !== 'task')) return undefined;
  const name = propertyValue(params, 'name');
  if (!name) return undefined;
  const args = propertyValue(params, 'arguments');
  return { name: name.getText(), args: args ? expressionAt(ctx.sourceFile, ctx.text, args, indentationAt(ctx.text, call.getStart())) : undefined };
}

/** A variable or `this.x` (reading it twice has no side effect), possibly cast (`as`, `!`, parentheses). */
function isPlainReference(node: Node): boolean {
  if (Node.isAsExpression(node) || Node.isTypeAssertion(node) || Node.isNonNullExpression(node) || Node.isParenthesizedExpression(node)) return isPlainReference(node.getExpression());
  if (Node.isIdentifier(node) || node.getKind() === SyntaxKind.ThisKeyword) return true;
  return Node.isPropertyAccessExpression(node) && !node.hasQuestionDotToken() && isPlainReference(node.getExpression());
}
