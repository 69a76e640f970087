import { Node, SyntaxKind, type CallExpression, type VariableDeclaration } from 'ts-morph';
import { callsNamed } from '../raw.js';
import { alwaysExits, bodyStatements, escapesCallback, expressionAt, semi, statementsAt } from '../codegen.js';
import type { Edit } from '../edits.js';
import { matchRawRequest, outermostWrapper, plainPropertyNames, propertyValue, resolveClient, unwrapExpression } from '../mcp-calls.js';
import { isReference, resolveIdentifier } from '../scope.js';
import { NON_TERMINAL_DIALECT, sameSet, statusesWhere, TERMINAL_DIALECT } from '../status-words.js';
import { indentationAt } from '../text.js';
import { arrowCallback, caughtErrorRef, paramName, readsOf, resultType } from './callbacks.js';
import { taskIdParam } from './shared.js';
import type { Transform, TransformContext } from './types.js';

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['request']);

export const dialectPollLoop: Transform = {
  name: 'dialect-poll-loop',
  description: 'tasks/create + a poll loop on tasks/status + the done/error branches → await tasksClient.callTool(name, args, { onTaskCreated, onStatus }) with try/catch',
  triggers: ['tasks/create'],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const raw = matchRawRequest(call, ctx.mcp.methodValues);
      if (raw?.method !== 'tasks/create') continue;
      const client = resolveClient(raw.receiver, ctx.mcp);
      if (client.kind !== 'constructed') {
        if (client.kind === 'proven' || (client.kind === 'unknown' && ctx.facts.hasMcpImport)) ctx.marker(call, 'dialect-create');
        continue;
      }
      const flow = readFlow(call, client.decl, ctx.mcp.methodValues);
      if (!flow) {
        ctx.marker(call, 'dialect-create');
        continue;
      }
      if (!ctx.isFree(flow.first.getStart(), flow.last.getEnd())) continue;
      const tc = ctx.tasksClientFor(client.decl, flow.first);
      if (!tc) {
        ctx.marker(call, 'unresolved-client');
        continue;
      }
      if (ctx.edit(flow.first.getStart(), flow.last.getEnd(), render(ctx, flow, tc))) ctx.rewrote(call);
    }
  },
};

interface Flow {
  first: Node;
  last: Node;
  name: string;
  args: Node | undefined;
  created: string;
  /** Statements between tasks/create and the loop: they run when the task exists (onTaskCreated). */
  onCreated: Node[];
  task: string;
  /** Statements of the loop other than the poll and the sleep: they see every status (onStatus). */
  observers: Node[];
  isCreated: (n: Node) => boolean;
  isTask: (n: Node) => boolean;
  done: Node[];
  /** undefined: the old code ignored an error outcome. */
  error: Node[] | undefined;
}

function readFlow(call: CallExpression, clientDecl: VariableDeclaration, typed: ReadonlyMap<string, string> | undefined): Flow | undefined {
  // const created = await client.request({ method: 'tasks/create', params: { name, arguments, ttl } }, Schema)
  const awaited = call.getParent();
  if (!awaited || !Node.isAwaitExpression(awaited)) return undefined;
  const value = outermostWrapper(awaited);
  const decl = value.getParent();
  if (!decl || !Node.isVariableDeclaration(decl) || decl.getInitializer() !== value || !Node.isIdentifier(decl.getNameNode())) return undefined;
  const createStatement = decl.getParent()?.getParent();
  if (!createStatement || !Node.isVariableStatement(createStatement) || createStatement.getDeclarations().length !== 1) return undefined;
  const block = createStatement.getParent();
  if (!block || !(Node.isBlock(block) || Node.isSourceFile(block))) return undefined;
  const raw = matchRawRequest(call, typed)!;
  if (!raw.params || !Node.isObjectLiteralExpression(raw.params)) return undefined;
  const names = plainPropertyNames(raw.params);
  if (!names || names.some((n) => n !== 'name' && n !== 'arguments' && n !== 'ttl')) return undefined;
  const name = propertyValue(raw.params, 'name');
  if (!name) return undefined;
  const args = propertyValue(raw.params, 'arguments');

  const created = decl.getName();
  const isVar = (target: VariableDeclaration) => (n: Node): boolean => {
    if (!Node.isIdentifier(n) || !isReference(n)) return false;
    const b = resolveIdentifier(n);
    return b?.kind === 'variable' && b.decl === target && !b.element;
  };
  const isCreated = isVar(decl);
  const statements = block.getStatements();
  const at = statements.indexOf(createStatement);
  const loopIndex = statements.findIndex((st, i) => i > at && (Node.isWhileStatement(st) || Node.isDoStatement(st) || Node.isForStatement(st)));
  if (loopIndex === -1) return undefined;
  const loop = statements[loopIndex]!;
  let onCreated = statements.slice(at + 1, loopIndex);

  // let task = created; (optional: else the loop assigns `created` itself)
  let taskDecl = decl;
  const lastMid = onCreated[onCreated.length - 1];
  if (lastMid && Node.isVariableStatement(lastMid) && lastMid.getDeclarations().length === 1) {
    const d = lastMid.getDeclarations()[0]!;
    const init = d.getInitializer();
    if (Node.isIdentifier(d.getNameNode()) && init && isCreated(init)) {
      taskDecl = d;
      onCreated = onCreated.slice(0, -1);
    }
  }
  const isTask = isVar(taskDecl);
  const task = taskDecl.getName();

  // The loop: poll tasks/status until a terminal status, sleeping in between.
  let condition: Node | undefined;
  let body: Node[];
  if (Node.isWhileStatement(loop) || Node.isDoStatement(loop)) {
    condition = loop.getExpression();
    body = bodyStatements(loop.getStatement());
  } else if (Node.isForStatement(loop)) {
    if (loop.getInitializer() || loop.getIncrementor() || (loop.getCondition() && loop.getCondition()!.getKind() !== SyntaxKind.TrueKeyword)) return undefined;
    body = bodyStatements(loop.getStatement());
  } else {
    return undefined;
  }
  if (condition && condition.getKind() === SyntaxKind.TrueKeyword) condition = undefined;
  if (condition) {
    const running = statusesWhere(condition, (n) => isTask(n), [...NON_TERMINAL_DIALECT, ...TERMINAL_DIALECT]);
    if (!running || !sameSet(running, NON_TERMINAL_DIALECT)) return undefined;
  } else {
    const exits = body.filter((st) => Node.isIfStatement(st) && isBreak(st.getThenStatement()) && !st.getElseStatement());
    if (exits.length !== 1) return undefined;
    const stop = statusesWhere(exits[0]!.asKindOrThrow(SyntaxKind.IfStatement).getExpression(), (n) => isTask(n), [...NON_TERMINAL_DIALECT, ...TERMINAL_DIALECT]);
    if (!stop || !sameSet(stop, TERMINAL_DIALECT)) return undefined;
    body = body.filter((st) => st !== exits[0]);
  }
  const polls = body.filter((st) => isPoll(st, isTask, isCreated, clientDecl, typed));
  if (polls.length !== 1) return undefined;
  const observers = body.filter((st) => st !== polls[0] && !isSleep(st));
  if (escapesCallback(observers) || assigns(observers, isTask) || assigns(observers, isCreated)) return undefined;
  if (readsOf(observers, isCreated).some((r) => r.prop !== 'taskId')) return undefined;

  // onCreated statements: no control flow out, nothing declared that later code uses.
  if (escapesCallback(onCreated) || assigns(onCreated, isCreated)) return undefined;
  const rest = statements.slice(loopIndex + 1);
  const declared = new Set(onCreated.flatMap((st) => (Node.isVariableStatement(st) ? st.getDeclarations().map((d) => d.getName()) : [])));
  const later = [...body, ...rest];
  if (later.some((st) => st.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => declared.has(id.getText()) && isReference(id)))) return undefined;
  if (rest.some((st) => readsOf([st], isCreated).length > 0)) return undefined;

  // After the loop: branch on done / error.
  const outcome = readOutcome(rest, isTask);
  if (!outcome) return undefined;
  return { first: createStatement, last: outcome.last, name: name.getText(), args, created, onCreated, task, observers, isCreated, isTask, done: outcome.done, error: outcome.error };
}

function isBreak(node: Node): boolean {
  const stmts = bodyStatements(node);
  return stmts.length === 1 && Node.isBreakStatement(stmts[0]!) && !stmts[0].getLabel();
}

/** `task = await client.request({ method: 'tasks/status', params: { taskId: created.taskId } }, Schema)` on the same client. */
function isPoll(st: Node, isTask: (n: Node) => boolean, isCreated: (n: Node) => boolean, clientDecl: VariableDeclaration, typed: ReadonlyMap<string, string> | undefined): boolean {
  if (!Node.isExpressionStatement(st)) return false;
  const expr = st.getExpression();
  if (!Node.isBinaryExpression(expr) || expr.getOperatorToken().getKind() !== SyntaxKind.EqualsToken || !isTask(expr.getLeft())) return false;
  const right = unwrapExpression(expr.getRight());
  if (!Node.isAwaitExpression(right)) return false;
  const call = unwrapExpression(right.getExpression());
  if (!Node.isCallExpression(call)) return false;
  const raw = matchRawRequest(call, typed);
  if (!raw || raw.method !== 'tasks/status' || raw.options) return false;
  const receiver = raw.receiver;
  if (!Node.isIdentifier(receiver)) return false;
  const b = resolveIdentifier(receiver);
  if (b?.kind !== 'variable' || b.decl !== clientDecl) return false;
  const id = taskIdParam(raw.params);
  return id !== undefined && Node.isPropertyAccessExpression(id) && id.getName() === 'taskId' && (isCreated(id.getExpression()) || isTask(id.getExpression()));
}

/** `await sleep(…)`, `await delay(…)`, `await new Promise((r) => setTimeout(r, …))`, `await setTimeout(…)` (timers/promises). */
function isSleep(st: Node): boolean {
  if (!Node.isExpressionStatement(st)) return false;
  const expr = st.getExpression();
  if (!Node.isAwaitExpression(expr)) return false;
  const inner = expr.getExpression();
  if (Node.isNewExpression(inner)) return inner.getExpression().getText() === 'Promise' && inner.getText().includes('setTimeout');
  if (!Node.isCallExpression(inner)) return false;
  const callee = inner.getExpression();
  const name = Node.isIdentifier(callee) ? callee.getText() : Node.isPropertyAccessExpression(callee) ? callee.getName() : '';
  return /^(sleep|delay|wait|pause|setTimeout|timeout)$/i.test(name) || /(Sleep|Delay)$/.test(name);
}

function assigns(statements: Node[], isVar: (n: Node) => boolean): boolean {
  return statements.some((st) =>
    st.getDescendantsOfKind(SyntaxKind.BinaryExpression).some((b) => {
      const op = b.getOperatorToken().getKind();
      return op >= SyntaxKind.FirstAssignment && op <= SyntaxKind.LastAssignment && isVar(b.getLeft());
    }),
  );
}

interface Outcome {
  done: Node[];
  error: Node[] | undefined;
  /** The last statement the rewrite replaces. */
  last: Node;
}

/**
 * `if (task.status === 'done') {…} else {…}` (or the error test first, or an early exit followed
 * by the other case). Reads of the task: `.result` in the done code, `.error` in the error code.
 */
function readOutcome(rest: Node[], isTask: (n: Node) => boolean): Outcome | undefined {
  const first = rest[0];
  if (!first || !Node.isIfStatement(first)) return undefined;
  const when = statusesWhere(first.getExpression(), isTask, TERMINAL_DIALECT);
  if (!when || when.size !== 1) return undefined;
  const thenIsDone = when.has('done');
  const then = bodyStatements(first.getThenStatement());
  const otherwise = first.getElseStatement();
  let done: Node[];
  let error: Node[] | undefined;
  let last: Node = first;
  if (otherwise) {
    let other: Node[];
    if (Node.isIfStatement(otherwise)) {
      const next = statusesWhere(otherwise.getExpression(), isTask, TERMINAL_DIALECT);
      if (!next || next.size !== 1 || next.has(thenIsDone ? 'done' : 'error') || otherwise.getElseStatement()) return undefined;
      other = bodyStatements(otherwise.getThenStatement());
    } else {
      other = bodyStatements(otherwise);
    }
    [done, error] = thenIsDone ? [then, other] : [other, then];
  } else if (alwaysExits(then)) {
    // if (task.status === 'error') throw …;  <the done case continues below>
    const after = rest.slice(1);
    [done, error] = thenIsDone ? [then, after] : [after, then];
    if (after.length > 0) last = after[after.length - 1]!;
  } else {
    [done, error] = thenIsDone ? [then, undefined] : [[], then];
    if (rest.slice(1).some((st) => readsOf([st], isTask).length > 0)) return undefined;
  }
  if (readsOf(done, isTask).some((r) => r.prop !== 'result')) return undefined;
  if (error && readsOf(error, isTask).some((r) => r.prop !== 'error')) return undefined;
  return { done, error, last };
}

function render(ctx: TransformContext, flow: Flow, tc: string): string {
  const indent = indentationAt(ctx.text, flow.first.getStart());
  const u = ctx.style.indent;
  const end = semi(ctx.style);
  const sub = (stmts: Node[], isVar: (n: Node) => boolean, replacement: (use: Node) => string): Edit[] =>
    readsOf(stmts, isVar).map((r) => (r.access ? { start: r.access.getStart(), end: r.access.getEnd(), text: replacement(r.access) } : { start: r.id.getStart(), end: r.id.getEnd(), text: replacement(r.id) }));
  const callIndent = indent + u;

  const optionLines: string[] = [];
  if (flow.onCreated.length > 0) {
    const param = flow.created;
    optionLines.push(`onTaskCreated: ${arrowCallback(ctx, param, { statements: flow.onCreated, edits: [] }, callIndent + u)}`);
  }
  if (flow.observers.length > 0) {
    const param = flow.observers.some((st) => readsOf([st], flow.isTask).length > 0) ? flow.task : paramName('task', flow.observers);
    // created.taskId inside the loop is the same task's id.
    const edits = sub(flow.observers, flow.isCreated, () => `${param}.taskId`).filter((e) => e.text !== '');
    optionLines.push(`onStatus: ${arrowCallback(ctx, param, { statements: flow.observers, edits }, callIndent + u)}`);
  }
  const argsText = flow.args ? expressionAt(ctx.sourceFile, ctx.text, flow.args, callIndent) : optionLines.length > 0 ? '{}' : undefined;
  const optionsText = optionLines.length > 0 ? `, {\n${optionLines.map((l) => `${callIndent}${u}${l},`).join('\n')}\n${callIndent}}` : '';
  const callText = `await ${tc}.callTool(${[flow.name, ...(argsText ? [argsText] : [])].join(', ')}${optionsText})`;

  const errorName = flow.error && flow.error.length > 0 ? ctx.fresh('error', flow.first, false) : '';
  const catchText =
    flow.error && flow.error.length > 0
      ? `catch (${errorName}) {\n${statementsAt(ctx.sourceFile, ctx.text, flow.error, callIndent, sub(flow.error, flow.isTask, (use) => caughtErrorRef(ctx, errorName, use)))}\n${indent}}`
      : `catch {\n${callIndent}// the task failed or was cancelled\n${indent}}`;

  const single = singleResultAssignment(flow.done, flow.isTask);
  if (flow.done.length === 0 || single) {
    const line = single ? `${single} = ${callText}${end}` : `${callText}${end}`;
    return `try {\n${callIndent}${line}\n${indent}} ${catchText}`;
  }
  const resultName = ctx.fresh('result', flow.first);
  const exits = flow.error !== undefined && flow.error.length > 0 && alwaysExits(flow.error);
  const declared = ctx.isTypeScript ? `let ${resultName}: ${resultType(ctx)}${exits ? '' : ' | undefined'}${end}` : `let ${resultName}${end}`;
  const tryText = `try {\n${callIndent}${resultName} = ${callText}${end}\n${indent}} ${catchText}`;
  const doneAt = (at: string): string => statementsAt(ctx.sourceFile, ctx.text, flow.done, at, sub(flow.done, flow.isTask, () => resultName));
  if (exits) return `${declared}\n${indent}${tryText}\n${doneAt(indent)}`;
  return `${declared}\n${indent}${tryText}\n${indent}if (${resultName}) {\n${doneAt(indent + u)}\n${indent}}`;
}

/** `x = task.result;` as the whole done case. */
function singleResultAssignment(done: Node[], isTask: (n: Node) => boolean): string | undefined {
  if (done.length !== 1) return undefined;
  const st = done[0]!;
  if (!Node.isExpressionStatement(st)) return undefined;
  const expr = st.getExpression();
  if (!Node.isBinaryExpression(expr) || expr.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return undefined;
  const right = expr.getRight();
  if (!Node.isPropertyAccessExpression(right) || right.getName() !== 'result' || !isTask(right.getExpression())) return undefined;
  if (readsOf([expr.getLeft()], isTask).length > 0) return undefined;
  return expr.getLeft().getText();
}
