import { Node, SyntaxKind, type ObjectLiteralExpression, type VariableDeclaration } from 'ts-morph';
import { callsNamed } from '../raw.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { METHOD_TABLE } from '../../src/mapping/methods.js';
import { bodyStatements, expressionAt, quoted, semi, statementsAt } from '../codegen.js';
import { resolveClient, statementOf } from '../mcp-calls.js';
import { isSdkSpecifier } from '../reexports.js';
import { isReference, resolveIdentifier } from '../scope.js';
import { indentationAt } from '../text.js';
import { addProperty } from './shared.js';
import type { Transform, TransformContext } from './types.js';

const SDK_TYPES_MODULE = '@modelcontextprotocol/sdk/types.js';

/** The input request an SDK elicitation handler answers; other methods (sampling, roots) are not its to answer. */
const ELICITATION_METHOD = METHOD_TABLE.find((row) => row.method === 'elicitation/create')!.method;
/** Read from the SDK's own schema: the method a sampling handler answers. */
const SAMPLING_METHOD: string = CreateMessageRequestSchema.shape.method.value;

interface Sampling {
  /** What onInputRequest calls for a sampling request. */
  name: string;
  /** An inline handler becomes a `const` the SDK registration and the TasksClient share. */
  hoist?: { start: number; end: number; text: string };
}

/**
 * The sampling handler registered on the same SDK client (before its TasksClient), so that task
 * sampling requests reach it too; 'conflict' when there is one the codemod cannot share.
 */
function samplingHandler(ctx: TransformContext, clientDecl: VariableDeclaration, tcDecl: VariableDeclaration): Sampling | 'conflict' | undefined {
  const registration = callsNamed(ctx.sourceFile, CALLS).find((c) => {
    const callee = c.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || !ctx.mcp.isSdkExport(c.getArguments()[0], 'CreateMessageRequestSchema')) return false;
    const ref = resolveClient(callee.getExpression(), ctx.mcp);
    return ref.kind === 'constructed' && ref.decl === clientDecl;
  });
  if (!registration) return undefined;
  const handler = registration.getArguments()[1];
  if (!handler || registration.getStart() > tcDecl.getStart()) return 'conflict';
  if (Node.isIdentifier(handler)) return { name: handler.getText() };
  if (!Node.isArrowFunction(handler) && !Node.isFunctionExpression(handler)) return 'conflict';
  const extra = handler.getParameters()[1];
  if (extra && usesParameter(extra, handler)) return 'conflict';
  const statement = statementOf(registration);
  if (!statement || !Node.isExpressionStatement(statement) || statement.getExpression() !== registration) return 'conflict';
  const name = ctx.fresh('onSampling', statement);
  const indent = indentationAt(ctx.text, statement.getStart());
  // Out of setRequestHandler's call the parameter loses its contextual type: write it down.
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const param = handler.getParameters()[0];
  if (ctx.isTypeScript && param && !param.getTypeNode()) {
    const type = ctx.importSdkType('CreateMessageRequest', SDK_TYPES_MODULE);
    const parenthesised = handler.getFirstChildByKind(SyntaxKind.OpenParenToken) !== undefined;
    edits.push({ start: param.getStart(), end: param.getEnd(), text: parenthesised ? `${param.getText()}: ${type}` : `(${param.getText()}: ${type})` });
  }
  const text = `const ${name} = ${expressionAt(ctx.sourceFile, ctx.text, handler, indent, edits)}${semi(ctx.style)}\n${indent}${ctx.text.slice(statement.getStart(), handler.getStart())}${name}${ctx.text.slice(handler.getEnd(), statement.getEnd())}`;
  return { name, hoist: { start: statement.getStart(), end: statement.getEnd(), text } };
}

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['setRequestHandler']);

export const elicitationHandler: Transform = {
  name: 'elicitation-handler',
  description: "client.setRequestHandler(ElicitRequestSchema, handler) of a migrated client → the TasksClient's onInputRequest (answers go back with tasks/update)",
  triggers: ['ElicitRequestSchema'],
  phase: 2,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'setRequestHandler') continue;
      const [schema, handler] = call.getArguments();
      if (!handler || !ctx.mcp.isSdkExport(schema, 'ElicitRequestSchema')) continue;
      const client = resolveClient(callee.getExpression(), ctx.mcp);
      if (client.kind === 'proven') {
        moveToHelperOf(ctx, call, callee.getExpression(), handler, schemaModule(schema));
        continue;
      }
      if (client.kind !== 'constructed') continue;
      const tcDecl = ctx.existingTasksClient(client.decl);
      if (!tcDecl) continue; // nothing of this client was migrated: the handler serves the SDK client only
      const statement = statementOf(call);
      const options = tcDecl.getInitializer()?.asKind(SyntaxKind.NewExpression)?.getArguments()[0];
      if (!statement || !Node.isExpressionStatement(statement) || statement.getExpression() !== call || !options || !Node.isObjectLiteralExpression(options)) {
        ctx.marker(call, 'elicitation-handler');
        continue;
      }
      if (options.getProperty('onInputRequest')) {
        ctx.marker(call, 'elicitation-handler');
        continue;
      }
      const propIndent = propertyIndent(ctx, options);
      const sampling = samplingHandler(ctx, client.decl, tcDecl);
      if (sampling === 'conflict') continue;
      const value = handlerValue(ctx, handler, propIndent, schemaModule(schema), sampling?.name);
      if (!value) {
        ctx.marker(call, 'elicitation-handler');
        continue;
      }
      if (!ctx.isFree(statement.getStart(), statement.getEnd()) || !ctx.isFree(options.getStart(), options.getEnd())) continue;
      if (sampling?.hoist && !ctx.isFree(sampling.hoist.start, sampling.hoist.end)) continue;
      if (!addProperty(ctx, options, `onInputRequest: ${value}`, propIndent) || !ctx.removeStatement(statement)) continue;
      if (sampling?.hoist) ctx.edit(sampling.hoist.start, sampling.hoist.end, sampling.hoist.text);
      ctx.rewrote(statement);
    }
  },
};

/**
 * A client created elsewhere (a parameter, `this.client`, an import, a helper's return value)
 * whose task calls this file migrated to `tasksClientFor(<receiver>)`: the handler goes to that
 * helper with `setTaskInputHandler(<receiver>, …)`, in place. The SDK client loses it, and may
 * still send requests elsewhere: always `elicitation-moved`.
 */
function moveToHelperOf(ctx: TransformContext, call: Node, receiver: Node, handler: Node, module: string): void {
  const receiverText = receiver.getText();
  // Only a client whose tasks go through the helper here: elsewhere the handler still serves the SDK client alone.
  if (!callsNamed(ctx.sourceFile, HELPER_CALLS).some((c) => c.getExpression().getText() === 'tasksClientFor' && sameClient(c.getArguments()[0], receiver))) return;
  const statement = statementOf(call);
  if (!statement || !Node.isExpressionStatement(statement) || statement.getExpression() !== call || !ctx.isFree(statement.getStart(), statement.getEnd())) return;
  if (hostsTasks(handler)) {
    ctx.marker(call, 'elicitation-handler');
    return;
  }
  const indent = indentationAt(ctx.text, statement.getStart());
  const value = handlerValue(ctx, handler, indent, module, undefined);
  if (!value) {
    ctx.marker(call, 'elicitation-handler');
    return;
  }
  ctx.importFromHelper(['setTaskInputHandler']);
  if (!ctx.replaceNode(statement, `setTaskInputHandler(${receiverText}, ${value})${semi(ctx.style)}`)) return;
  ctx.marker(statement, 'elicitation-moved');
  ctx.rewrote(statement);
}

const HELPER_CALLS: ReadonlySet<string> = new Set(['tasksClientFor']);

/** The same variable, parameter or `this.x` of the same class. */
function sameClient(a: Node | undefined, b: Node): boolean {
  if (!a || a.getText() !== b.getText()) return false;
  if (Node.isIdentifier(a) && Node.isIdentifier(b)) {
    const [x, y] = [resolveIdentifier(a), resolveIdentifier(b)];
    return x !== undefined && y !== undefined && x.kind === y.kind && bindingNode(x) === bindingNode(y);
  }
  const classOf = (n: Node): Node | undefined => n.getFirstAncestor((p) => Node.isClassDeclaration(p) || Node.isClassExpression(p));
  return classOf(a) === classOf(b);
}

function bindingNode(binding: NonNullable<ReturnType<typeof resolveIdentifier>>): Node {
  if (binding.kind === 'variable' || binding.kind === 'import' || binding.kind === 'namespace-import') return binding.decl;
  if (binding.kind === 'parameter') return binding.param;
  return binding.node;
}

/**
 * The handler answers task-augmented elicitations (it reads `params.task`): it hosts tasks on the
 * client, which SEP-2663 input requests never ask for; its answer is not an elicitation result.
 */
function hostsTasks(handler: Node): boolean {
  return handler.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression).some((access) => {
    if (access.getName() !== 'task') return false;
    let base: Node = access.getExpression();
    while (Node.isParenthesizedExpression(base) || Node.isAsExpression(base) || Node.isNonNullExpression(base)) base = base.getExpression();
    return Node.isPropertyAccessExpression(base) && base.getName() === 'params';
  });
}

/** The SDK module the schema was imported from, for the ElicitRequest type next to it. */
function schemaModule(schema: Node | undefined): string {
  let node = schema;
  if (node && Node.isPropertyAccessExpression(node)) node = node.getExpression();
  if (node && Node.isIdentifier(node)) {
    const binding = resolveIdentifier(node);
    if ((binding?.kind === 'import' || binding?.kind === 'namespace-import') && isSdkSpecifier(binding.decl.getModuleSpecifierValue())) return binding.decl.getModuleSpecifierValue();
  }
  return SDK_TYPES_MODULE;
}

/**
 * The handler as an InputRequestHandler: it receives `{ key, method, params }` (the same
 * `params` as the elicitation request) and returns the same `{ action, content }` answer. In
 * TypeScript the request is typed back to the SDK's ElicitRequest so the old body still checks.
 */
function handlerValue(ctx: TransformContext, handler: Node, indent: string, module: string, sampling: string | undefined): string | undefined {
  const bodyIndent = indent + ctx.style.indent;
  const end = semi(ctx.style);
  const toSampling = (input: string): string => {
    if (!sampling) return '';
    const arg = ctx.isTypeScript ? `${input} as unknown as ${ctx.importSdkType('CreateMessageRequest', module)}` : input;
    return `${bodyIndent}if (${input}.method === ${quoted(ctx.style, SAMPLING_METHOD)}) return ${sampling}(${arg})${end}\n`;
  };
  const guard = (input: string): string =>
    `${toSampling(input)}${bodyIndent}if (${input}.method !== ${quoted(ctx.style, ELICITATION_METHOD)}) throw new Error(\`no handler for \${${input}.method}\`)${end}\n`;
  if (Node.isIdentifier(handler)) {
    const input = ctx.fresh('input', handler);
    const arg = ctx.isTypeScript ? `${input} as unknown as ${ctx.importSdkType('ElicitRequest', module)}` : input;
    return `(${input}) => {\n${guard(input)}${bodyIndent}return ${handler.getText()}(${arg})${end}\n${indent}}`;
  }
  if (!Node.isArrowFunction(handler) && !Node.isFunctionExpression(handler)) return undefined;
  const params = handler.getParameters();
  if (params.length > 2) return undefined;
  const [request, extra] = params;
  if (extra && usesParameter(extra, handler)) return undefined; // RequestHandlerExtra has no TasksClient equivalent
  const asyncText = handler.isAsync() ? 'async ' : '';
  const body = handler.getBody();
  const statements = Node.isBlock(body) ? bodyStatements(body) : undefined;
  const bodyText = (prefix: string): string => {
    if (statements) return `{\n${prefix}${statements.length ? statementsAt(ctx.sourceFile, ctx.text, statements, bodyIndent) : ''}\n${indent}}`;
    // `=> ({ … })` needs its parentheses; `return { … }` does not.
    const value = Node.isParenthesizedExpression(body) ? body.getExpression() : body;
    return `{\n${prefix}${bodyIndent}return ${expressionAt(ctx.sourceFile, ctx.text, value, bodyIndent)}${end}\n${indent}}`;
  };
  const used = request !== undefined && usesParameter(request, handler);
  const input = used && !ctx.isTypeScript ? request.getNameNode().getText() : ctx.fresh('input', handler);
  if (!used || !ctx.isTypeScript) return `${asyncText}(${input}) => ${bodyText(guard(input))}`;
  const type = ctx.importSdkType('ElicitRequest', module);
  const cast = `${bodyIndent}const ${request.getNameNode().getText()} = ${input} as unknown as ${type}${end}\n`;
  return `${asyncText}(${input}) => ${bodyText(guard(input) + cast)}`;
}

function usesParameter(param: Node, fn: Node): boolean {
  const nameNode = (param as unknown as { getNameNode(): Node }).getNameNode();
  const names = Node.isIdentifier(nameNode) ? [nameNode.getText()] : nameNode.getDescendantsOfKind(SyntaxKind.Identifier).map((i) => i.getText());
  return fn
    .getDescendantsOfKind(SyntaxKind.Identifier)
    .some((id) => names.includes(id.getText()) && isReference(id) && id.getParent() !== param && !nameNode.getDescendants().includes(id) && id !== nameNode);
}

function propertyIndent(ctx: TransformContext, options: ObjectLiteralExpression): string {
  const props = options.getProperties();
  const last = props[props.length - 1];
  if (last && ctx.text.slice(options.getStart(), last.getStart()).includes('\n')) return indentationAt(ctx.text, last.getStart());
  return indentationAt(ctx.text, options.getStart()) + ctx.style.indent;
}
