import { Node, SyntaxKind, type CallExpression } from 'ts-morph';
import { isResultUnused, outermostWrapper } from '../mcp-calls.js';
import { callsNamed } from '../raw.js';
import { mapRequestOptions, optionProperties, optionsArgument } from '../request-options.js';
import { sdkResultType } from './callbacks.js';
import { isMcpReceiver, tasksClientAt, toolCallTarget } from './shared.js';
import type { Transform } from './types.js';

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['callTool']);

export const callToolTask: Transform = {
  name: 'call-tool-task',
  description: 'client.callTool(params, schema, { task: { ttl } }) (a task-augmented call) → tasksClient.callTool(name, args, { signal, onStatus }) with the request options mapped',
  triggers: ['callTool'],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'callTool') continue;
      const [params, schema, options] = call.getArguments();
      if (!params || !isTaskAugmented(params, options)) continue;
      const receiver = callee.getExpression();
      if (!ctx.isFree(call.getStart(), call.getEnd()) || !isMcpReceiver(ctx, receiver, { mcpOnly: false })) continue;
      const mapped = mapRequestOptions(options);
      const target = Node.isObjectLiteralExpression(params) ? toolCallTarget(ctx, call, params) : undefined;
      if (!target) {
        ctx.marker(call, 'create-task-result');
        continue;
      }
      if (readsCreateTaskResult(call)) {
        ctx.marker(call, 'create-task-result');
        continue;
      }
      const tc = tasksClientAt(ctx, receiver, call, { mcpOnly: false });
      if (!tc) continue;
      const props = optionProperties(mapped);
      const optionsArg = optionsArgument(ctx, mapped, props.length ? `{ ${props.join(', ')} }` : undefined);
      const args = target.args ?? (optionsArg ? '{}' : undefined);
      const list = [target.name, ...(args ? [args] : []), ...(optionsArg ? [optionsArg] : [])].join(', ');
      const called = `${tc}.callTool(${list})`;
      // TypeScript: the old call answered the SDK's result type; keep it for the code that reads it.
      const text = ctx.isTypeScript && !isResultUnused(call) ? `(${called} as Promise<${sdkResultType(ctx, schema)}>)` : called;
      if (!ctx.replaceNode(call, text)) continue;
      ctx.rewrote(call);
    }
  },
};

/** `task` in the request options (or in the params, the wire's place for it). */
function isTaskAugmented(params: Node, options: Node | undefined): boolean {
  const hasTask = (node: Node | undefined): boolean => node !== undefined && Node.isObjectLiteralExpression(node) && node.getProperty('task') !== undefined;
  return hasTask(options) || hasTask(params);
}


/** The answer is read as a CreateTaskResult (`.task`): the helper's callTool answers the final result instead. */
function readsCreateTaskResult(call: CallExpression): boolean {
  const outer = outermostWrapper(call);
  const parent = outer.getParent();
  if (parent && Node.isPropertyAccessExpression(parent) && parent.getName() === 'task') return true;
  if (parent && Node.isVariableDeclaration(parent)) {
    const name = parent.getNameNode();
    if (Node.isObjectBindingPattern(name)) return name.getElements().some((e) => (e.getPropertyNameNode()?.getText() ?? e.getName()) === 'task');
    if (Node.isIdentifier(name)) {
      const scope = parent.getFirstAncestor((a) => Node.isBlock(a) || Node.isSourceFile(a)) ?? parent.getSourceFile();
      return scope.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression).some((access) => access.getName() === 'task' && access.getExpression().getText() === name.getText());
    }
  }
  return false;
}
