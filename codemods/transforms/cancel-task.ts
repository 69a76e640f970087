import { Node } from 'ts-morph';
import { callsNamed } from '../raw.js';
import { METHOD_TABLE } from '../../src/mapping/methods.js';
import { isRepeatable, isResultUnused, matchExperimentalCall, matchRawRequest } from '../mcp-calls.js';
import { signalArgument } from '../request-options.js';
import { taskIdParam, tasksClientAt, RAW_REQUEST } from './shared.js';
import type { Transform } from './types.js';

const CANCEL_METHODS = new Set(METHOD_TABLE.filter((row) => row.sep2663 === 'tasks/cancel').map((row) => row.method));

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['cancelTask', 'request']);

export const cancelTask: Transform = {
  name: 'cancel-task',
  description: 'client.experimental.tasks.cancelTask(id) and raw tasks/cancel → tasksClient.cancelTask(id) (+ getTask when the old answer, a task, is used)',
  triggers: ['cancelTask', ...CANCEL_METHODS, RAW_REQUEST],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      if (!ctx.isFree(call.getStart(), call.getEnd())) continue;
      const exp = matchExperimentalCall(call);
      let id: Node | undefined;
      let options: Node | undefined;
      let receiver: Node;
      let mcpOnly = true;
      if (exp?.method === 'cancelTask') {
        [id, options] = call.getArguments();
        receiver = exp.receiver;
      } else {
        const raw = matchRawRequest(call, ctx.mcp.methodValues);
        if (!raw || !CANCEL_METHODS.has(raw.method)) continue;
        id = taskIdParam(raw.params);
        options = raw.options;
        receiver = raw.receiver;
        mcpOnly = false; // tasks/cancel is a common method name outside MCP
      }
      if (!id) continue;
      const expectsFailure = expectsRejection(call);
      const tc = tasksClientAt(ctx, receiver, call, { mcpOnly });
      if (!tc) continue;
      const idText = id.getText();
      const signal = signalArgument(ctx, options);
      const cancel = `${tc}.cancelTask(${idText}${signal ? `, ${signal}` : ''})`;
      if (expectsFailure) ctx.marker(call, 'cancel-terminal');
      if (isResultUnused(call)) {
        if (ctx.replaceNode(call, cancel)) ctx.rewrote(call);
      } else if (isRepeatable(id)) {
        // The old answer was the task; SEP-2663 acks with nothing, so read the task afterwards.
        if (ctx.replaceNode(call, `${cancel}.then(() => ${tc}.getTask(${idText}))`)) ctx.rewrote(call);
      } else {
        ctx.marker(call, 'cancel-result');
      }
    }
  },
};

/** The cancel is expected to fail: inside `expect(…)…rejects`, or awaited in a `try` whose `catch` handles it. */
function expectsRejection(call: Node): boolean {
  for (let cur: Node | undefined = call.getParent(); cur; cur = cur.getParent()) {
    if (Node.isCallExpression(cur) && Node.isIdentifier(cur.getExpression()) && cur.getExpression().getText() === 'expect') {
      const access = cur.getParent();
      return access !== undefined && Node.isPropertyAccessExpression(access) && access.getName() === 'rejects';
    }
    if (Node.isArrowFunction(cur) || Node.isFunctionExpression(cur)) {
      const holder = cur.getParent();
      if (!(holder && Node.isCallExpression(holder) && holder.getExpression().getText() === 'expect')) return false;
    }
    if (Node.isTryStatement(cur)) return cur.getCatchClause() !== undefined && cur.getTryBlock().containsRange(call.getPos(), call.getEnd());
    if (Node.isFunctionDeclaration(cur) || Node.isMethodDeclaration(cur)) return false;
  }
  return false;
}
