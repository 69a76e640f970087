import { Node, SyntaxKind, ts, type CallExpression, type PropertyAccessExpression } from 'ts-morph';
import { LEGACY_METHODS, resolveClient, unwrapExpression } from '../mcp-calls.js';
import type { MarkerCode } from '../markers.js';
import { constantString, textKey } from '../method-values.js';
import { findRaw, identifiersNamed, wrap } from '../raw.js';
import { looksLikeServer } from '../receivers.js';
import { resolveIdentifier } from '../scope.js';
import { methodsOf } from '../typed-methods.js';
import { clientOptionsObjects, hostsTasks } from './client-task-host.js';
import type { Transform, TransformContext } from './types.js';

/** Methods of the old task protocols (tasks/*, notifications/tasks/status), read from the mapping table. */
const TASK_METHODS: ReadonlySet<string> = new Set([...LEGACY_METHODS].filter((m) => m.includes('tasks/')));

/** SDK exports that only old task code uses: a reference to one is an old-API site. */
const TASK_EXPORTS: ReadonlyMap<string, MarkerCode> = new Map([
  ['TaskStatusNotificationSchema', 'status-notifications'],
  ['CreateTaskResultSchema', 'task-method'],
  ['GetTaskResultSchema', 'task-method'],
  ['GetTaskPayloadResultSchema', 'task-method'],
  ['CancelTaskResultSchema', 'task-method'],
  ['ListTasksResultSchema', 'task-method'],
]);

/** Field names the old task shapes have and SEP-2663 renamed (`ttl` is only one next to a `taskId`). */
const OLD_FIELDS = new Set(['pollInterval', 'ttl']);

/** Codes this transform writes: a marker of another code on a statement means another transform saw the site. */
const OWN_CODES: ReadonlySet<MarkerCode> = new Set(['task-method', 'task-params', 'client-task-host', 'old-task-fields', 'unresolved-client', 'status-notifications']);

/**
 * The last pass over a file that uses MCP: every old-API site that no transform rewrote or marked
 * gets a marker, so nothing is left silently. A site is a legacy task method named in code
 * (literal, constant, enum member, imported constant through the type checker), an
 * `experimental.tasks` access, an SDK task schema, task-augmentation params, a client that hosts
 * tasks, and reads or declarations of the old task fields. Sites sent through a receiver proven to
 * be something else (another protocol's client) or a server are look-alikes and stay as they are.
 */
export const leftoverSites: Transform = {
  name: 'leftover-sites',
  description: 'marks every old tasks API site no other transform rewrote or marked (constants, wrappers, unknown receivers, task params, client-hosted tasks, old wire fields)',
  triggers: ['tasks/', 'experimental', 'TaskStatusNotification', 'TaskResultSchema', 'task:', 'task =', 'Task(', 'pollInterval', 'ttl', 'taskStore', 'taskMessageQueue'],
  phase: 4,
  run(ctx) {
    const evidence = ctx.facts.hasMcpImport || /modelcontextprotocol|CreateTaskResult|notifications\/tasks\/status/.test(ctx.text);
    if (!evidence) return;
    if (ctx.facts.hasMcpImport) {
      methodSites(ctx);
      experimentalSites(ctx);
      exportSites(ctx);
      taskParamSites(ctx);
      clientHostSites(ctx);
    }
    oldFieldSites(ctx);
  },
};

/** Marks `node` unless a transform already rewrote or marked its statement; a re-run repeats its own rows. */
function site(ctx: TransformContext, node: Node, code: MarkerCode): void {
  if (ctx.isCovered(node, OWN_CODES)) return;
  ctx.marker(node, code);
}

function methodSites(ctx: TransformContext): void {
  const sf = ctx.sourceFile;
  const typed = ctx.mcp.methodValues;
  const candidates = findRaw(sf.compilerNode, (n) => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return TASK_METHODS.has(n.text);
    if (!(ts.isIdentifier(n) || ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n))) return false;
    return isMethodPosition(n);
  }).map((n) => wrap(sf, n));
  for (const node of candidates) {
    const literal = Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node);
    if (!literal) {
      const value = constantString(node, typed) ?? typed?.get(textKey(node));
      if (!methodsOf(value).some((m) => TASK_METHODS.has(m))) continue;
    }
    if (node.getFirstAncestorByKind(SyntaxKind.LiteralType) || node.getFirstAncestorByKind(SyntaxKind.ImportDeclaration)) continue;
    if (literal && isReferencedDefinition(node)) continue;
    const call = sendingCall(node);
    if (call && !isClientSide(ctx, call)) continue;
    if (inServerCode(ctx, node)) continue;
    site(ctx, call && isRequestLike(call) ? call : node, call && isRequestLike(call) && receiverKind(ctx, call) === 'unknown' ? 'unresolved-client' : 'task-method');
  }
}

/** Where a method value is used rather than just passed around: `method: x`, a call argument, a `case`, a comparison. */
function isMethodPosition(n: ts.Node): boolean {
  const p = n.parent;
  if (!p) return false;
  if (ts.isPropertyAssignment(p) && p.initializer === n) return ts.isIdentifier(p.name) && p.name.text === 'method';
  if (ts.isShorthandPropertyAssignment(p)) return p.name.text === 'method';
  if (ts.isCallExpression(p)) return p.arguments.includes(n as ts.Expression);
  if (ts.isCaseClause(p)) return p.expression === n;
  if (ts.isBinaryExpression(p)) return [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(p.operatorToken.kind);
  return false;
}

/**
 * `const TASKS_GET = 'tasks/get'`, a property of a `const` object, an enum member, that the file
 * reads: its uses are the sites. One nothing in the file reads (an export) is a site itself.
 */
function isReferencedDefinition(lit: Node): boolean {
  let node = lit;
  while (Node.isAsExpression(node.getParent()!) || Node.isSatisfiesExpression(node.getParent()!)) node = node.getParent()!;
  const parent = node.getParent();
  let name: string | undefined;
  if (parent && Node.isVariableDeclaration(parent) && parent.getInitializer() === node) name = parent.getName();
  else if (parent && Node.isEnumMember(parent)) name = parent.getParent().getName();
  else if (parent && Node.isPropertyAssignment(parent) && parent.getName() !== 'method') {
    let obj: Node = parent.getParent();
    while (Node.isAsExpression(obj.getParent()!) || Node.isSatisfiesExpression(obj.getParent()!)) obj = obj.getParent()!;
    const decl = obj.getParent();
    if (decl && Node.isVariableDeclaration(decl)) name = decl.getName();
  }
  if (!name) return false;
  // Read in this file: its uses are the sites. Read nowhere and not exported: dead (a rewrite took its last use).
  const statement = node.getFirstAncestor((a) => Node.isVariableStatement(a) || Node.isEnumDeclaration(a));
  const exported = statement !== undefined && (Node.isVariableStatement(statement) || Node.isEnumDeclaration(statement)) && statement.isExported();
  return identifiersNamed(lit.getSourceFile(), name).length > 1 || !exported;
}

const SENDING = new Set(['request', 'notification', 'send', 'sendRequest', 'sendNotification', 'setNotificationHandler', 'setRequestHandler', 'requestStream']);

/** The `x.request(…)`-like call a method value is sent or registered through, when it is one. */
function sendingCall(node: Node): CallExpression | undefined {
  for (let cur = node.getParent(); cur && !Node.isStatement(cur); cur = cur.getParent()) {
    if (Node.isCallExpression(cur)) {
      const callee = cur.getExpression();
      if (Node.isPropertyAccessExpression(callee) && SENDING.has(callee.getName())) return cur;
    }
    if (Node.isArrowFunction(cur) || Node.isFunctionExpression(cur)) return undefined;
  }
  return undefined;
}

function isRequestLike(call: CallExpression): boolean {
  const callee = call.getExpression();
  return Node.isPropertyAccessExpression(callee) && ['request', 'requestStream', 'sendRequest'].includes(callee.getName());
}

function receiverKind(ctx: TransformContext, call: CallExpression): 'client' | 'server' | 'other' | 'unknown' {
  const callee = call.getExpression();
  if (!Node.isPropertyAccessExpression(callee)) return 'unknown';
  const receiver = callee.getExpression();
  const typed = ctx.mcp.receiverKinds?.get(textKey(receiver).replace(/[!?]/g, ''));
  if (typed === 'other') return 'other';
  const ref = resolveClient(receiver, ctx.mcp).kind;
  if (ref === 'server' || (ref === 'unknown' && looksLikeServer(receiver))) return 'server';
  if (ref === 'constructed' || ref === 'proven') return 'client';
  return syntacticOther(receiver) ? 'other' : 'unknown';
}

/** A receiver declared with a type that is not the SDK's (`queue: Queue`): another protocol's client. */
function syntacticOther(receiver: Node): boolean {
  const node = unwrapExpression(receiver);
  if (!Node.isIdentifier(node)) return false;
  const binding = resolveIdentifier(node);
  const decl = binding?.kind === 'parameter' && !binding.element ? binding.param : binding?.kind === 'variable' && !binding.element ? binding.decl : undefined;
  const type = decl?.getTypeNode();
  return type !== undefined && !/\bClient\b|\bany\b|\bunknown\b/.test(type.getText());
}

function isClientSide(ctx: TransformContext, call: CallExpression): boolean {
  const kind = receiverKind(ctx, call);
  return kind === 'client' || kind === 'unknown';
}

/** Inside a handler registered on a server, or a call on one: server code is never marked. */
function inServerCode(ctx: TransformContext, node: Node): boolean {
  for (let cur = node.getParent(); cur; cur = cur.getParent()) {
    if (!Node.isCallExpression(cur)) continue;
    const callee = cur.getExpression();
    if (Node.isPropertyAccessExpression(callee) && receiverKind(ctx, cur) === 'server') return true;
  }
  return false;
}

function experimentalSites(ctx: TransformContext): void {
  const sf = ctx.sourceFile;
  const accesses = findRaw(sf.compilerNode, (n) => ts.isPropertyAccessExpression(n) && n.name.text === 'tasks' && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'experimental');
  for (const raw of accesses) {
    const access = wrap(sf, raw);
    const receiver = (access.asKindOrThrow(SyntaxKind.PropertyAccessExpression).getExpression() as Node).asKindOrThrow(SyntaxKind.PropertyAccessExpression).getExpression();
    const kind = ctx.mcp.receiverKinds?.get(textKey(receiver).replace(/[!?]/g, ''));
    const ref = resolveClient(receiver, ctx.mcp).kind;
    if (kind === 'other' || ref === 'server' || (ref === 'unknown' && looksLikeServer(receiver)) || inServerCode(ctx, access)) continue;
    site(ctx, access, 'unresolved-client');
  }
}

function exportSites(ctx: TransformContext): void {
  const sf = ctx.sourceFile;
  const ids = findRaw(sf.compilerNode, (n) => ts.isIdentifier(n) && TASK_EXPORTS.has(n.text) && !isInImportOrExport(n)).map((n) => wrap(sf, n));
  for (const id of ids) {
    const parent = id.getParent();
    const expr = parent && Node.isPropertyAccessExpression(parent) && parent.getNameNode() === id ? parent : id;
    if (!ctx.mcp.isSdkExport(expr, id.getText())) continue;
    if (inServerCode(ctx, id)) continue;
    // The result schema of a request whose method is known: the method decides (a ping is no task request).
    const call = sendingCall(id);
    if (call && isRequestLike(call) && methodIsKnown(ctx, call)) continue;
    site(ctx, expr, TASK_EXPORTS.get(id.getText())!);
  }
}

/** The request's method is a literal, a constant, or a name declared with a literal type. */
function methodIsKnown(ctx: TransformContext, call: CallExpression): boolean {
  const request = call.getArguments()[0];
  if (!request || !Node.isObjectLiteralExpression(request)) return false;
  const prop = request.getProperty('method');
  const method = prop && Node.isPropertyAssignment(prop) ? prop.getInitializer() : prop && Node.isShorthandPropertyAssignment(prop) ? prop.getNameNode() : undefined;
  if (!method) return false;
  if (constantString(method, ctx.mcp.methodValues) !== undefined) return true;
  if (!Node.isIdentifier(method)) return false;
  const binding = resolveIdentifier(method);
  const declared = binding?.kind === 'parameter' ? binding.param : binding?.kind === 'variable' ? binding.decl : undefined;
  const type = declared?.getTypeNode();
  return type !== undefined && Node.isLiteralTypeNode(type);
}

function isInImportOrExport(n: ts.Node): boolean {
  for (let cur: ts.Node | undefined = n.parent; cur; cur = cur.parent) {
    if (ts.isImportDeclaration(cur) || ts.isExportDeclaration(cur)) return true;
    if (ts.isStatement(cur)) return false;
  }
  return false;
}

const TOOL_CALLS = new Set(['callTool', 'callToolStream', 'request', 'requestStream']);

/** `task: { ttl }` (or a spread of a task-building helper) in what a client sends with tools/call, and `params.task = …`. */
function taskParamSites(ctx: TransformContext): void {
  const sf = ctx.sourceFile;
  const props = findRaw(sf.compilerNode, (n) => {
    if ((ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) && n.name && ts.isIdentifier(n.name) && n.name.text === 'task') return true;
    if (ts.isSpreadAssignment(n)) return /task/i.test(n.expression.getText(sf.compilerNode)) && !/tasks?Client/i.test(n.expression.getText(sf.compilerNode));
    return ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(n.left) && n.left.name.text === 'task' && /params/i.test(n.left.expression.getText(sf.compilerNode));
  }).map((n) => wrap(sf, n));
  for (const prop of props) {
    if (Node.isBinaryExpression(prop)) {
      if (!inServerCode(ctx, prop)) site(ctx, prop, 'task-params');
      continue;
    }
    const call = prop.getFirstAncestor((a) => Node.isCallExpression(a) && Node.isPropertyAccessExpression(a.getExpression()) && TOOL_CALLS.has((a.getExpression() as PropertyAccessExpression).getName()));
    if (!call || !Node.isCallExpression(call) || !isClientSide(ctx, call) || inServerCode(ctx, prop)) continue;
    // Inside a callback passed to the call (a handler), `task` is something else.
    if (prop.getFirstAncestor((a) => (Node.isArrowFunction(a) || Node.isFunctionExpression(a)) && a.getStart() > call.getStart())) continue;
    site(ctx, prop, 'task-params');
  }
}

function clientHostSites(ctx: TransformContext): void {
  for (const options of clientOptionsObjects(ctx)) {
    for (const prop of options.getProperties()) {
      const name = Node.isPropertyAssignment(prop) || Node.isShorthandPropertyAssignment(prop) ? prop.getName() : undefined;
      if (name === 'taskStore' || name === 'taskMessageQueue') site(ctx, prop, 'client-task-host');
      if (name === 'capabilities' && Node.isPropertyAssignment(prop)) {
        const caps = prop.getInitializer();
        const tasks = caps && Node.isObjectLiteralExpression(caps) ? caps.getProperty('tasks') : undefined;
        if (tasks) site(ctx, tasks, 'client-task-host');
      }
    }
  }
  for (const handler of hostsTasks(ctx)) site(ctx, handler, 'client-task-host');
}

/** Reads (`task.pollInterval`, `created.task.ttl`) and declarations (interfaces, zod objects) of the old task fields. */
function oldFieldSites(ctx: TransformContext): void {
  const sf = ctx.sourceFile;
  for (const node of findRaw(sf.compilerNode, (n) => ts.isPropertyAccessExpression(n) && OLD_FIELDS.has(n.name.text)).map((n) => wrap(sf, n))) {
    const base = node.asKindOrThrow(SyntaxKind.PropertyAccessExpression).getExpression();
    if (isTaskLike(base) && !inServerCode(ctx, node)) site(ctx, node, 'old-task-fields');
  }
  for (const obj of findRaw(sf.compilerNode, (n) => ts.isInterfaceDeclaration(n) || ts.isTypeLiteralNode(n) || ts.isObjectLiteralExpression(n)).map((n) => wrap(sf, n))) {
    const names = memberNames(obj);
    if (!names.has('taskId') || ![...OLD_FIELDS].some((f) => names.has(f))) continue;
    if (Node.isObjectLiteralExpression(obj) && !isSchemaObject(obj)) continue;
    if (inServerCode(ctx, obj)) continue;
    site(ctx, obj, 'old-task-fields');
  }
  for (const decl of sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration)) {
    const pattern = decl.getNameNode();
    const init = decl.getInitializer();
    if (!Node.isObjectBindingPattern(pattern) || !init || !isTaskLike(init)) continue;
    if (pattern.getElements().some((el) => OLD_FIELDS.has(el.getPropertyNameNode()?.getText() ?? el.getName()))) site(ctx, decl, 'old-task-fields');
  }
}

/** `task`, `createdTask`, `result.task`, `status.task!`: what code names a task (an app's `tasksConfig` is not). */
function isTaskLike(node: Node): boolean {
  const base = unwrapExpression(node);
  const name = Node.isIdentifier(base) ? base.getText() : Node.isPropertyAccessExpression(base) ? base.getName() : '';
  return /task$/i.test(name);
}

function memberNames(obj: Node): Set<string> {
  const members = Node.isInterfaceDeclaration(obj) || Node.isTypeLiteral(obj) ? obj.getMembers() : Node.isObjectLiteralExpression(obj) ? obj.getProperties() : [];
  return new Set(members.map((m) => (Node.isPropertySignature(m) || Node.isPropertyAssignment(m) || Node.isShorthandPropertyAssignment(m) ? m.getName() : '')).filter(Boolean));
}

/** `z.object({ … })` and the like: a parser of the old shape, not a value the code builds. */
function isSchemaObject(obj: Node): boolean {
  const call = obj.getParent();
  return call !== undefined && Node.isCallExpression(call) && /\b(object|looseObject|strictObject|Type\.Object)$/.test(call.getExpression().getText());
}
