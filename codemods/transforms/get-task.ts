import { Node, SyntaxKind } from 'ts-morph';
import { METHOD_TABLE } from '../../src/mapping/methods.js';
import { matchExperimentalCall, matchRawRequest, outermostWrapper, unwrapExpression, type RawRequest } from '../mcp-calls.js';
import { callsNamed } from '../raw.js';
import { isReference, resolveIdentifier } from '../scope.js';
import { TaskValues } from '../task-values.js';
import { signalArgument } from '../request-options.js';
import { isMcpOnlyMethod, taskIdParam, tasksClientAt, RAW_REQUEST } from './shared.js';
import type { Transform, TransformContext } from './types.js';

/** Old methods that SEP-2663 replaces with tasks/get (tasks/status of the dialect, tasks/get of 2025-11-25). */
const GET_METHODS = new Set(METHOD_TABLE.filter((row) => row.sep2663 === 'tasks/get').map((row) => row.method));

/** The 2025-11-25 method whose answer is the SDK's Task. */
const SDK_TASK_METHOD = 'tasks/get';

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['getTask', 'request']);

export const getTask: Transform = {
  name: 'get-task',
  description: 'client.experimental.tasks.getTask(id), raw tasks/get and tasks/status requests → tasksClient.getTask(id)',
  triggers: ['getTask', ...GET_METHODS, RAW_REQUEST],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const exp = matchExperimentalCall(call);
      if (exp?.method === 'getTask') {
        const [id, options] = call.getArguments();
        if (!id || !ctx.isFree(call.getStart(), call.getEnd())) continue;
        const tc = tasksClientAt(ctx, exp.receiver, call, { mcpOnly: true });
        if (!tc) continue;
        if (ctx.replaceNode(call, getTaskCall(ctx, tc, id, options, call, SDK_TASK_METHOD))) ctx.rewrote(call);
        continue;
      }
      const raw = matchRawRequest(call, ctx.mcp.methodValues);
      if (!raw || !GET_METHODS.has(raw.method)) continue;
      rewriteRaw(ctx, raw);
    }
  },
};

function rewriteRaw(ctx: TransformContext, raw: RawRequest): void {
  const id = taskIdParam(raw.params);
  if (!id || !ctx.isFree(raw.call.getStart(), raw.call.getEnd())) return;
  if (raw.method === 'tasks/status' && feedsOldTask(ctx, raw.call)) return; // the tasks/create flow around it keeps its marker
  const mcpOnly = isMcpOnlyMethod(raw.method);
  const tc = tasksClientAt(ctx, raw.receiver, raw.call, { mcpOnly });
  if (!tc) return;
  if (ctx.replaceNode(raw.call, getTaskCall(ctx, tc, id, raw.options, raw.call, raw.method))) ctx.rewrote(raw.call);
}

/**
 * `tc.getTask(id[, options])`; where the old answer is handed on whole (returned, stored, passed)
 * and code may expect the SDK's Task, converted back to that shape (`.then(toLegacyTask)`). A
 * dialect task (`tasks/status`) has another shape altogether: marked instead.
 */
function getTaskCall(ctx: TransformContext, tc: string, id: Node, options: Node | undefined, call: Node, method: string): string {
  const signal = signalArgument(ctx, options);
  const text = `${tc}.getTask(${id.getText()}${signal ? `, ${signal}` : ''})`;
  if (!passesTaskOn(call)) return text;
  if (method !== SDK_TASK_METHOD) {
    ctx.marker(call, 'task-shape');
    return text;
  }
  ctx.importFromHelper(['toLegacyTask']);
  return `${text}.then(toLegacyTask)`;
}

/**
 * The task is handed on whole (returned, passed as an argument, stored), where code may expect the
 * SDK's Task; reads of its fields are renamed by task-fields and need no marker.
 */
function passesTaskOn(call: Node): boolean {
  const outer = outermostWrapper(call);
  const parent = outer.getParent();
  if (!parent) return false;
  if (Node.isExpressionStatement(parent) || ((Node.isPropertyAccessExpression(parent) || Node.isElementAccessExpression(parent)) && parent.getExpression() === outer)) return false;
  if (!Node.isVariableDeclaration(parent)) return true;
  const name = parent.getNameNode();
  if (!Node.isIdentifier(name)) return false;
  const scope = parent.getFirstAncestor((a) => Node.isBlock(a) || Node.isSourceFile(a));
  if (!scope) return false;
  return scope.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => {
    if (id === name || id.getText() !== name.getText() || !isReference(id)) return false;
    const binding = resolveIdentifier(id);
    if (binding?.kind !== 'variable' || binding.decl !== parent) return false;
    const use = id.getParent();
    return !(use && (Node.isPropertyAccessExpression(use) || Node.isElementAccessExpression(use)) && use.getExpression() === id);
  });
}

/**
 * `task = await client.request({ method: 'tasks/status' … })` into a variable that also holds
 * something else (the old tasks/create result): rewriting only this half would mix two shapes.
 */
function feedsOldTask(ctx: TransformContext, call: Node): boolean {
  const node = outermostWrapper(call);
  const parent = node.getParent();
  if (!parent || !Node.isBinaryExpression(parent) || parent.getOperatorToken().getKind() !== SyntaxKind.EqualsToken || parent.getRight() !== node) return false;
  const target = parent.getLeft();
  if (!Node.isIdentifier(target)) return true;
  const binding = resolveIdentifier(target);
  if (binding?.kind !== 'variable' || binding.element) return true;
  const init = binding.decl.getInitializer();
  return init !== undefined && !new TaskValues(ctx.mcp).isTask(init) && !isStatusRequest(init, ctx.mcp.methodValues);
}

function isStatusRequest(init: Node, typed: ReadonlyMap<string, string> | undefined): boolean {
  let node = unwrapExpression(init);
  if (Node.isAwaitExpression(node)) node = unwrapExpression(node.getExpression());
  if (!Node.isCallExpression(node)) return false;
  const raw = matchRawRequest(node, typed);
  return raw !== undefined && GET_METHODS.has(raw.method);
}
