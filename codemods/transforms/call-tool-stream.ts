import { Node, SyntaxKind, type CallExpression, type ForOfStatement } from 'ts-morph';
import { alwaysExits, bodyStatements, breaksOut, escapesCallback, semi, statementsAt } from '../codegen.js';
import type { Edit } from '../edits.js';
import { matchExperimentalCall, plainPropertyNames, propertyValue, resolveClient } from '../mcp-calls.js';
import { callsNamed } from '../raw.js';
import { isReference, referencesTo, resolveIdentifier, sameVariable } from '../scope.js';
import { indentationAt } from '../text.js';
import { arrowCallback, caughtErrorRef, paramName, readsOf, sdkResultType, type MovedCode } from './callbacks.js';
import { tasksClientAt } from './shared.js';
import { looksLikeServer } from '../receivers.js';
import { toolCallTarget, type ToolCallTarget } from './shared.js';
import { mapRequestOptions, optionProperties, optionsArgument, runtimeOptions, type MappedOptions } from '../request-options.js';
import type { Transform, TransformContext } from './types.js';

type MessageType = 'taskCreated' | 'taskStatus' | 'result' | 'error';
const MESSAGE_TYPES: readonly MessageType[] = ['taskCreated', 'taskStatus', 'result', 'error'];
/** The message field each branch may read. */
const FIELD: Record<MessageType, string> = { taskCreated: 'task', taskStatus: 'task', result: 'result', error: 'error' };

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['callToolStream', 'requestStream']);

export const callToolStream: Transform = {
  name: 'call-tool-stream',
  description: 'for await (… of client.experimental.tasks.callToolStream(…)) → await tasksClient.callTool(name, args, { onTaskCreated, onStatus }) with try/catch for the error branch',
  triggers: ['callToolStream', 'requestStream'],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const exp = matchExperimentalCall(call);
      if (exp?.method !== 'callToolStream' && exp?.method !== 'requestStream') continue;
      const clientRef = resolveClient(exp.receiver, ctx.mcp);
      if (clientRef.kind === 'server' || (clientRef.kind === 'unknown' && (!ctx.facts.hasMcpImport || looksLikeServer(exp.receiver)))) continue;
      const site = findLoop(call);
      if (!site) {
        ctx.marker(call, 'stream-shape');
        continue;
      }
      const start = (site.streamStatement ?? site.loop).getStart();
      if (!ctx.isFree(start, site.loop.getEnd())) continue;
      let options = mapRequestOptions(call.getArguments()[2]);
      const params = exp.method === 'requestStream' ? toolCallParams(call.getArguments()[0]) : call.getArguments()[0];
      const target = params && toolCallTarget(ctx, call, params);
      const branches = readBranches(site.loop);
      if (!target || !branches) {
        ctx.marker(call, 'stream-shape');
        continue;
      }
      const tc = tasksClientAt(ctx, exp.receiver, site.streamStatement ?? site.loop, { mcpOnly: true });
      if (!tc) continue;
      // onprogress and a taskStatus branch both become onStatus: callOptionsFrom runs both.
      if (options.onStatus && branches.code.taskStatus?.length) options = runtimeOptions(call.getArguments()[2]!);
      const text = render(ctx, site.loop, branches, target, options, tc, call.getArguments()[1]);
      if (!ctx.replaceNode(site.loop, text)) continue;
      // The generator is lazy: left behind by a conflict, its declaration would send nothing.
      if (site.streamStatement) ctx.removeStatement(site.streamStatement);
      ctx.rewrote(call);
    }
  },
};

interface LoopSite {
  loop: ForOfStatement;
  /** `const stream = client.experimental.tasks.callToolStream(…)` when the loop iterates a variable. */
  streamStatement?: Node;
}

function findLoop(call: CallExpression): LoopSite | undefined {
  const parent = call.getParent();
  if (parent && Node.isForOfStatement(parent) && parent.isAwaited() && parent.getExpression() === call) return plainLoop(parent) ? { loop: parent } : undefined;
  if (!parent || !Node.isVariableDeclaration(parent) || parent.getInitializer() !== call || !Node.isIdentifier(parent.getNameNode())) return undefined;
  const statement = parent.getParent()?.getParent();
  if (!statement || !Node.isVariableStatement(statement) || statement.getDeclarations().length !== 1) return undefined;
  const block = statement.getParent();
  if (!block) return undefined;
  const refs = referencesTo(block, parent.getName(), sameVariable(parent));
  if (refs.length !== 1) return undefined;
  const loop = refs[0]!.getParent();
  if (!loop || !Node.isForOfStatement(loop) || !loop.isAwaited() || loop.getExpression() !== refs[0] || loop.getParent() !== block || !plainLoop(loop)) return undefined;
  return { loop, streamStatement: statement };
}

function plainLoop(loop: ForOfStatement): boolean {
  const parent = loop.getParent();
  return parent !== undefined && !Node.isLabeledStatement(parent);
}

/** `{ method: 'tools/call', params }` of a requestStream: its params; undefined for any other request. */
function toolCallParams(request: Node | undefined): Node | undefined {
  if (!request || !Node.isObjectLiteralExpression(request)) return undefined;
  const names = plainPropertyNames(request);
  const method = propertyValue(request, 'method');
  if (!names || names.some((n) => n !== 'method' && n !== 'params') || !method) return undefined;
  if (!(Node.isStringLiteral(method) || Node.isNoSubstitutionTemplateLiteral(method)) || method.getLiteralText() !== 'tools/call') return undefined;
  return propertyValue(request, 'params');
}


interface Branches {
  isMessage: (node: Node) => boolean;
  code: Partial<Record<MessageType, Node[]>>;
}

/** The loop body as one branch per message type: a switch on message.type, or if/else-if chains. */
function readBranches(loop: ForOfStatement): Branches | undefined {
  const init = loop.getInitializer();
  if (!Node.isVariableDeclarationList(init) || init.getDeclarations().length !== 1) return undefined;
  const decl = init.getDeclarations()[0]!;
  const message = decl.getNameNode();
  if (!Node.isIdentifier(message)) return undefined;
  const isMessage = (node: Node): boolean => {
    if (!Node.isIdentifier(node) || node.getText() !== message.getText() || !isReference(node)) return false;
    const b = resolveIdentifier(node);
    return b?.kind === 'variable' && b.decl === decl;
  };
  const typeOf = (expr: Node | undefined): MessageType | undefined => {
    if (!expr || !Node.isBinaryExpression(expr)) return undefined;
    const op = expr.getOperatorToken().getKind();
    if (op !== SyntaxKind.EqualsEqualsEqualsToken && op !== SyntaxKind.EqualsEqualsToken) return undefined;
    const [l, r] = [expr.getLeft(), expr.getRight()];
    const [access, literal] = Node.isPropertyAccessExpression(l) ? [l, r] : [r, l];
    if (!Node.isPropertyAccessExpression(access) || access.getName() !== 'type' || !isMessage(access.getExpression())) return undefined;
    if (!Node.isStringLiteral(literal)) return undefined;
    const value = literal.getLiteralText();
    return (MESSAGE_TYPES as readonly string[]).includes(value) ? (value as MessageType) : undefined;
  };

  const code: Partial<Record<MessageType, Node[]>> = {};
  const add = (type: MessageType, statements: Node[]): boolean => {
    if (code[type]) return false;
    code[type] = statements;
    return true;
  };
  const statements = bodyStatements(loop.getStatement());
  const only = statements[0];
  if (statements.length === 1 && only && Node.isSwitchStatement(only)) {
    const discriminant = only.getExpression();
    if (!Node.isPropertyAccessExpression(discriminant) || discriminant.getName() !== 'type' || !isMessage(discriminant.getExpression())) return undefined;
    const clauses = only.getClauses();
    for (const [index, clause] of clauses.entries()) {
      const isBreak = (n: Node | undefined): boolean => n !== undefined && Node.isBreakStatement(n) && !n.getLabel();
      let body: Node[] = clause.getStatements();
      // A clause that falls into the next one would run two branches: not a shape callTool has.
      const ends = isBreak(body[body.length - 1]) || alwaysExits(body) || (body.length === 1 && Node.isBlock(body[0]!) && (isBreak(bodyStatements(body[0]!).at(-1)) || alwaysExits(bodyStatements(body[0]!))));
      if (body.length > 0 && index < clauses.length - 1 && !ends) return undefined;
      if (isBreak(body[body.length - 1])) body = body.slice(0, -1);
      if (body.length === 1 && Node.isBlock(body[0]!)) body = bodyStatements(body[0]!); // case 'x': { … }
      if (isBreak(body[body.length - 1])) body = body.slice(0, -1);
      if (Node.isDefaultClause(clause)) {
        if (body.length > 0) return undefined;
        continue;
      }
      const label = clause.getExpression();
      if (!Node.isStringLiteral(label) || !(MESSAGE_TYPES as readonly string[]).includes(label.getLiteralText())) return undefined;
      if (clause.getStatements().length === 0) return undefined; // fall-through between message types
      if (breaksOut(body)) return undefined;
      if (!add(label.getLiteralText() as MessageType, body)) return undefined;
    }
  } else {
    for (const st of statements) {
      if (!Node.isIfStatement(st)) return undefined;
      for (let branch: Node | undefined = st; branch; ) {
        if (Node.isIfStatement(branch)) {
          const type = typeOf(branch.getExpression());
          if (!type) return undefined;
          const body = bodyStatements(branch.getThenStatement());
          if (breaksOut(body)) return undefined;
          if (!add(type, body)) return undefined;
          branch = branch.getElseStatement();
        } else {
          if (bodyStatements(branch).length > 0) return undefined;
          branch = undefined;
        }
      }
    }
  }
  // Every use of the message must be the field its branch is about.
  for (const type of MESSAGE_TYPES) {
    const stmts = code[type];
    if (!stmts) continue;
    for (const read of readsOf(stmts, isMessage)) if (read.prop !== FIELD[type]) return undefined;
    if ((type === 'taskCreated' || type === 'taskStatus') && escapesCallback(stmts)) return undefined;
  }
  return { isMessage, code };
}

function render(ctx: TransformContext, loop: ForOfStatement, branches: Branches, target: ToolCallTarget, options: MappedOptions, tc: string, schema: Node | undefined): string {
  const indent = indentationAt(ctx.text, loop.getStart());
  const u = ctx.style.indent;
  const end = semi(ctx.style);
  const { code, isMessage } = branches;
  const substitute = (stmts: Node[], replacement: (use: Node) => string): MovedCode => {
    const edits: Edit[] = readsOf(stmts, isMessage).map((r) => ({ start: r.access!.getStart(), end: r.access!.getEnd(), text: replacement(r.access!) }));
    return { statements: stmts, edits };
  };

  const hasError = code.error !== undefined && !isRethrow(code.error, isMessage);
  const base = hasError ? indent + u : indent;
  const optionLines: string[] = [];
  optionLines.push(...optionProperties(options));
  for (const [type, prop] of [['taskCreated', 'onTaskCreated'], ['taskStatus', 'onStatus']] as const) {
    const stmts = code[type];
    if (!stmts || stmts.length === 0) continue;
    const param = paramName('task', stmts);
    optionLines.push(`${prop}: ${arrowCallback(ctx, param, substitute(stmts, () => param), base + u)}`);
  }
  const args = target.args ?? (optionLines.length > 0 ? '{}' : undefined);
  const argList = [target.name, ...(args ? [args] : [])];
  const literal = optionLines.length > 0 ? `{\n${optionLines.map((l) => `${base}${u}${l},`).join('\n')}\n${base}}` : undefined;
  const optionsArg = optionsArgument(ctx, options, literal);
  const optionsText = optionsArg ? `, ${optionsArg}` : '';
  const callText = `await ${tc}.callTool(${argList.join(', ')}${optionsText})`;

  const resultStmts = code.result ?? [];
  const assignTarget = singleAssignmentOf(resultStmts, isMessage);
  // TypeScript: the old result had the SDK's type; keep it, so the code that reads it still checks.
  const sdkType = ctx.isTypeScript && resultStmts.length > 0 ? sdkResultType(ctx, schema) : undefined;
  const valueText = sdkType ? `(${callText}) as ${sdkType}` : callText;
  const errorName = hasError ? ctx.fresh('error', loop, false) : '';
  const errorCode = hasError ? moved(ctx, substitute(code.error!, (use) => caughtErrorRef(ctx, errorName, use)), base) : '';

  if (resultStmts.length === 0 || assignTarget) {
    const line = assignTarget ? `${assignTarget} = ${valueText}${end}` : `${callText}${end}`;
    if (!hasError) return line;
    return `try {\n${base}${line}\n${indent}} catch (${errorName}) {\n${errorCode}\n${indent}}`;
  }
  const resultName = ctx.fresh('result', loop);
  const resultCode = (at: string): string => moved(ctx, substitute(resultStmts, () => resultName), at);
  if (!hasError) return `const ${resultName} = ${valueText}${end}\n${resultCode(indent)}`;
  const exits = alwaysExits(code.error!);
  const declared = ctx.isTypeScript ? `let ${resultName}: ${sdkType}${exits ? '' : ' | undefined'}${end}` : `let ${resultName}${end}`;
  const tryText = `try {\n${base}${resultName} = ${valueText}${end}\n${indent}} catch (${errorName}) {\n${errorCode}\n${indent}}`;
  if (exits) return `${declared}\n${indent}${tryText}\n${resultCode(indent)}`;
  return `${declared}\n${indent}${tryText}\n${indent}if (${resultName}) {\n${resultCode(indent + u)}\n${indent}}`;
}

function moved(ctx: TransformContext, code: MovedCode, indent: string): string {
  return statementsAt(ctx.sourceFile, ctx.text, code.statements, indent, code.edits);
}

/** `X = message.result;` as the whole result branch: the call can assign X directly. */
function singleAssignmentOf(stmts: Node[], isMessage: (n: Node) => boolean): string | undefined {
  if (stmts.length !== 1) return undefined;
  const st = stmts[0]!;
  if (!Node.isExpressionStatement(st)) return undefined;
  const expr = st.getExpression();
  if (!Node.isBinaryExpression(expr) || expr.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return undefined;
  const right = expr.getRight();
  if (!Node.isPropertyAccessExpression(right) || right.getName() !== 'result' || !isMessage(right.getExpression())) return undefined;
  const left = expr.getLeft();
  if (left.getDescendantsOfKind(SyntaxKind.Identifier).some(isMessage) || (Node.isIdentifier(left) && isMessage(left))) return undefined;
  return left.getText();
}

/** `throw message.error;` as the whole error branch: callTool already throws. */
function isRethrow(stmts: Node[], isMessage: (n: Node) => boolean): boolean {
  if (stmts.length !== 1) return false;
  const st = stmts[0]!;
  if (!Node.isThrowStatement(st)) return false;
  const expr = st.getExpression();
  return Node.isPropertyAccessExpression(expr) && expr.getName() === 'error' && isMessage(expr.getExpression());
}
