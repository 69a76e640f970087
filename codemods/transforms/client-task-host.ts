import { Node, SyntaxKind, ts, type CallExpression, type ObjectLiteralExpression, type ObjectLiteralElementLike } from 'ts-morph';
import { resolveClient } from '../mcp-calls.js';
import { callsNamed, findRaw, wrap } from '../raw.js';
import { looksLikeServer } from '../receivers.js';
import { resolveIdentifier } from '../scope.js';
import { lineStartOf } from '../text.js';
import type { Transform, TransformContext } from './types.js';

/** Options of an SDK Client that make it host tasks itself, which SEP-2663 removes. */
const HOST_OPTIONS = new Set(['taskStore', 'taskMessageQueue']);

/** A client handler that reads these hosts tasks for its own work (it answers task-augmented requests). */
const HOSTING_READ = /\bparams\??\.task\b|\btaskStore\b|\bextra\??\.task/;

/**
 * `new Client(info, { capabilities: { tasks: … }, taskStore, taskMessageQueue })`: SEP-2663 has no
 * client-hosted tasks, so a client that does not use them for its own work loses them (and the
 * imports of the store go with them). A file whose client handlers answer task-augmented requests
 * (`request.params.task`) keeps them, marked.
 */
export const clientTaskHost: Transform = {
  name: 'client-task-host',
  description: 'capabilities.tasks, taskStore and taskMessageQueue of an SDK Client removed (client-hosted tasks are gone in SEP-2663); marked where its handlers host tasks',
  triggers: ['taskStore', 'taskMessageQueue', 'tasks'],
  phase: 1,
  run(ctx) {
    if (!ctx.facts.hasMcpImport) return;
    const hosting = hostsTasks(ctx).length > 0;
    for (const options of clientOptionsObjects(ctx)) {
      for (const prop of hostProperties(options)) {
        if (hosting) ctx.marker(prop, 'client-task-host');
        else if (removeProperty(ctx, prop)) ctx.rewrote(prop);
      }
    }
  },
};

/** The `taskStore`, `taskMessageQueue` and `capabilities.tasks` properties of a client's options. */
function hostProperties(options: ObjectLiteralExpression): ObjectLiteralElementLike[] {
  const found: ObjectLiteralElementLike[] = [];
  for (const prop of options.getProperties()) {
    const name = Node.isPropertyAssignment(prop) || Node.isShorthandPropertyAssignment(prop) ? prop.getName() : undefined;
    if (name && HOST_OPTIONS.has(name)) found.push(prop);
    if (name === 'capabilities' && Node.isPropertyAssignment(prop)) {
      const caps = prop.getInitializer();
      const tasks = caps && Node.isObjectLiteralExpression(caps) ? caps.getProperty('tasks') : undefined;
      if (tasks) found.push(tasks);
    }
  }
  return found;
}

/** Option objects of `new Client(…)` (the SDK's) of this file: written in place, or a `const` passed there. */
export function clientOptionsObjects(ctx: TransformContext): ObjectLiteralExpression[] {
  const sf = ctx.sourceFile;
  const out: ObjectLiteralExpression[] = [];
  for (const raw of findRaw(sf.compilerNode, (n) => ts.isNewExpression(n) && (n.arguments?.length ?? 0) >= 2)) {
    const expr = wrap(sf, raw).asKindOrThrow(SyntaxKind.NewExpression);
    if (!ctx.mcp.isNewOf(expr, 'Client')) continue;
    let options: Node | undefined = expr.getArguments()[1];
    if (options && Node.isIdentifier(options)) {
      const binding = resolveIdentifier(options);
      options = binding?.kind === 'variable' && !binding.element ? binding.decl.getInitializer() : undefined;
    }
    while (options && (Node.isAsExpression(options) || Node.isSatisfiesExpression(options) || Node.isParenthesizedExpression(options))) options = options.getExpression();
    if (options && Node.isObjectLiteralExpression(options)) out.push(options);
  }
  return out;
}

/** `client.setRequestHandler(schema, handler)` calls (never a server's) whose handler answers task-augmented requests. */
export function hostsTasks(ctx: TransformContext): CallExpression[] {
  return callsNamed(ctx.sourceFile, new Set(['setRequestHandler'])).filter((call) => {
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee)) return false;
    const receiver = callee.getExpression();
    const kind = resolveClient(receiver, ctx.mcp).kind;
    if (kind === 'server' || (kind === 'unknown' && looksLikeServer(receiver)) || ctx.mcp.receiverKinds?.get(receiver.getText()) === 'other') return false;
    const handler = call.getArguments()[1];
    return handler !== undefined && HOSTING_READ.test(handler.getText());
  });
}

/** Removes an object literal property with its comma, and its line when it stands alone on it. */
function removeProperty(ctx: TransformContext, prop: Node): boolean {
  const text = ctx.text;
  let start = prop.getStart();
  let end = prop.getEnd();
  if (text[end] === ',') end++;
  const lineStart = lineStartOf(text, start);
  const lineEnd = text.indexOf('\n', end);
  if (/^[ \t]*$/.test(text.slice(lineStart, start)) && lineEnd !== -1 && /^[ \t]*$/.test(text.slice(end, lineEnd))) {
    return ctx.edit(lineStart, lineEnd + 1, '');
  }
  if (text[prop.getEnd()] !== ',') {
    // The last property: take the comma before it instead.
    const before = text.lastIndexOf(',', start);
    const open = prop.getParentOrThrow().getStart();
    if (before > open) start = before;
    else while (text[end] === ' ') end++;
  } else {
    while (text[end] === ' ') end++;
  }
  return ctx.edit(start, end, '');
}
