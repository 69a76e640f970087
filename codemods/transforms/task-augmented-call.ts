import { Node } from 'ts-morph';
import { callsNamed } from '../raw.js';
import { expressionAt, quoted, semi } from '../codegen.js';
import { isResultUnused, matchRawRequest, plainPropertyNames, propertyValue, resolveClient, statementOf } from '../mcp-calls.js';
import { referencesTo, sameVariable } from '../scope.js';
import { indentationAt } from '../text.js';
import { tasksClientAt } from './shared.js';
import { mapRequestOptions, optionProperties, optionsArgument } from '../request-options.js';
import type { Transform } from './types.js';

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['request']);

export const taskAugmentedCall: Transform = {
  name: 'task-augmented-call',
  description: "request({ method: 'tools/call', params: { …, task: { ttl } } }, CreateTaskResultSchema) read as .task.* → tasksClient.startTool(name, args) (the server now decides; a plain answer is marked)",
  triggers: ['CreateTaskResultSchema', 'tools/call'],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const raw = matchRawRequest(call, ctx.mcp.methodValues);
      if (raw?.method !== 'tools/call' || !raw.params || !Node.isObjectLiteralExpression(raw.params) || !raw.params.getProperty('task')) continue;
      const client = resolveClient(raw.receiver, ctx.mcp);
      if (client.kind === 'server' || (client.kind === 'unknown' && !ctx.facts.hasMcpImport)) continue;
      if (client.kind === 'unknown') {
        ctx.marker(call, 'unresolved-client');
        continue;
      }
      if (!ctx.mcp.isSdkExport(raw.schema, 'CreateTaskResultSchema')) {
        ctx.marker(call, 'create-task-result');
        continue;
      }
      const names = plainPropertyNames(raw.params);
      const name = propertyValue(raw.params, 'name');
      const args = propertyValue(raw.params, 'arguments');
      if (!names?.every((n) => n === 'name' || n === 'arguments' || n === 'task') || !name) {
        ctx.marker(call, 'create-task-result');
        continue;
      }
      const startTool = (tc: string, at: Node): string => {
        const mapped = mapRequestOptions(raw.options);
        const props = optionProperties(mapped);
        const optionsArg = optionsArgument(ctx, mapped, props.length ? `{ ${props.join(', ')} }` : undefined);
        // Re-indented for the line the call starts on: the old argument sat deeper, inside the request object.
        const argsText = args ? expressionAt(ctx.sourceFile, ctx.text, args, indentationAt(ctx.text, at.getStart())) : optionsArg ? '{}' : undefined;
        return `${tc}.startTool(${[name.getText(), ...(argsText ? [argsText] : []), ...(optionsArg ? [optionsArg] : [])].join(', ')})`;
      };
      // `await client.request(…);` for its side effect: the task (or the plain answer) is started the same way.
      if (isResultUnused(call)) {
        const tc = tasksClientAt(ctx, raw.receiver, call, { mcpOnly: false });
        if (tc && ctx.replaceNode(call, startTool(tc, call))) ctx.rewrote(call);
        continue;
      }
      // const created = await client.request(…); read only as created.task.*
      const awaited = call.getParent();
      const decl = awaited && Node.isAwaitExpression(awaited) ? awaited.getParent() : undefined;
      const statement = decl ? statementOf(decl) : undefined;
      const ok =
        decl !== undefined &&
        Node.isVariableDeclaration(decl) &&
        Node.isIdentifier(decl.getNameNode()) &&
        statement !== undefined &&
        Node.isVariableStatement(statement) &&
        statement.getDeclarations().length === 1 &&
        referencesTo(statement.getParentOrThrow(), decl.getName(), sameVariable(decl)).every((id) => {
          const p = id.getParent();
          return p !== undefined && Node.isPropertyAccessExpression(p) && p.getExpression() === id && p.getName() === 'task';
        });
      if (!ok || !decl || !Node.isVariableDeclaration(decl) || !statement || !Node.isVariableStatement(statement)) {
        ctx.marker(call, 'create-task-result');
        continue;
      }
      if (!ctx.isFree(statement.getStart(), statement.getEnd())) continue;
      const tc = tasksClientAt(ctx, raw.receiver, statement, { mcpOnly: false });
      if (!tc) continue;
      const v = decl.getName();
      const indent = indentationAt(ctx.text, statement.getStart());
      const keyword = statement.getDeclarationKind();
      const label = Node.isStringLiteral(name) ? quoted(ctx.style, `${name.getLiteralText()}: the server answered without a task`) : quoted(ctx.style, 'tools/call: the server answered without a task');
      const text = `${keyword} ${v} = await ${startTool(tc, statement)}${semi(ctx.style)}\n${indent}if (${v}.kind !== 'task') throw new Error(${label})${semi(ctx.style)}`;
      ctx.marker(statement, 'plain-result');
      if (ctx.replaceNode(statement, text)) ctx.rewrote(statement);
    }
  },
};
