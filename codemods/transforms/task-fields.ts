import { Node, SyntaxKind, ts, type ElementAccessExpression, type PropertyAccessExpression, type VariableDeclaration } from 'ts-morph';
import { nodesOfKind } from '../raw.js';
import { LEGACY_FIELD_TO_SEP2663 } from '../../src/mapping/fields.js';
import { CLIENT_HELPER_MODULE } from '../mcp-imports.js';
import { TaskValues } from '../task-values.js';
import type { Transform } from './types.js';

export const taskFields: Transform = {
  name: 'task-fields',
  description: `old task field names on migrated tasks → SEP-2663 (${Object.entries(LEGACY_FIELD_TO_SEP2663).map(([a, b]) => `${a} → ${b}`).join(', ')})`,
  triggers: [CLIENT_HELPER_MODULE],
  phase: 3,
  run(ctx) {
    const values = new TaskValues(ctx.mcp);
    const renamed = (name: string): string | undefined => (Object.hasOwn(LEGACY_FIELD_TO_SEP2663, name) ? LEGACY_FIELD_TO_SEP2663[name] : undefined);
    const legacy = (name: string): boolean => Object.hasOwn(LEGACY_FIELD_TO_SEP2663, name);
    const accesses = nodesOfKind<PropertyAccessExpression>(ctx.sourceFile, SyntaxKind.PropertyAccessExpression, ctx.sourceFile, (n) => legacy((n as ts.PropertyAccessExpression).name.text));
    for (const access of accesses) {
      const to = renamed(access.getName());
      if (to && values.isTask(access.getExpression()) && ctx.replaceNode(access.getNameNode(), to)) ctx.rewrote(access);
    }
    const elements = nodesOfKind<ElementAccessExpression>(ctx.sourceFile, SyntaxKind.ElementAccessExpression, ctx.sourceFile, (n) => {
      const arg = (n as ts.ElementAccessExpression).argumentExpression;
      return ts.isStringLiteral(arg) && legacy(arg.text);
    });
    for (const access of elements) {
      const arg = access.getArgumentExpression();
      if (!arg || !Node.isStringLiteral(arg)) continue;
      const to = renamed(arg.getLiteralText());
      const q = arg.getText()[0];
      if (to && values.isTask(access.getExpression()) && ctx.replaceNode(arg, `${q}${to}${q}`)) ctx.rewrote(arg);
    }
    // const { ttl, pollInterval: every } = task
    const patterns = nodesOfKind<VariableDeclaration>(ctx.sourceFile, SyntaxKind.VariableDeclaration, ctx.sourceFile, (n) => ts.isObjectBindingPattern((n as ts.VariableDeclaration).name));
    for (const decl of patterns) {
      const pattern = decl.getNameNode();
      if (!Node.isObjectBindingPattern(pattern) || !values.isTask(decl.getInitializer())) continue;
      for (const element of pattern.getElements()) {
        const prop = element.getPropertyNameNode();
        const to = renamed(prop ? prop.getText() : element.getName());
        if (!to) continue;
        if (prop ? ctx.replaceNode(prop, to) : ctx.replaceNode(element.getNameNode(), `${to}: ${element.getName()}`)) ctx.rewrote(element);
      }
    }
  },
};
