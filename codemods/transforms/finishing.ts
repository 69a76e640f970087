import { Node, SyntaxKind, ts, type ImportDeclaration, type VariableDeclaration, type VariableStatement } from 'ts-morph';
import { nodesOfKind } from '../raw.js';
import { propertyValue, statementOf } from '../mcp-calls.js';
import { moduleCallSpec } from '../mcp-imports.js';
import { referencesTo, sameVariable } from '../scope.js';
import { importReferenceCounts, isMcpModule } from '../import-planner.js';
import { indentationAt } from '../text.js';
import type { Transform, TransformContext } from './types.js';

/** Members of an SDK Client that only set it up or tear it down. */
const LIFECYCLE = new Set(['connect', 'close', 'setRequestHandler', 'setNotificationHandler', 'removeRequestHandler', 'removeNotificationHandler', 'onerror', 'onclose', 'fallbackNotificationHandler', 'fallbackRequestHandler']);

/**
 * After a file changed: marks what the migration leaves for a person (a TasksClient without a
 * URL, an SDK Client nothing uses any more, an elicitation handler a still-used SDK client lost).
 */
export const clientUsage: Transform = {
  name: 'client-usage',
  description: 'marks TasksClients without a URL, SDK Clients left unused, elicitation handlers moved off a still-used SDK Client',
  triggers: ['TasksClient'],
  phase: 9,
  run(ctx) {
    const constructions = nodesOfKind<VariableDeclaration>(ctx.sourceFile, SyntaxKind.VariableDeclaration, ctx.sourceFile, (n) => {
      const init = (n as ts.VariableDeclaration).initializer;
      return init !== undefined && ts.isNewExpression(init);
    });
    for (const decl of constructions) {
      if (!Node.isIdentifier(decl.getNameNode()) || !ctx.mcp.isNewOf(decl.getInitializer(), 'Client')) continue;
      const tc = ctx.existingTasksClient(decl);
      if (!tc) continue;
      const options = tc.getInitializer()?.asKind(SyntaxKind.NewExpression)?.getArguments()[0];
      const url = options && Node.isObjectLiteralExpression(options) ? propertyValue(options, 'url') : undefined;
      if (url && Node.isStringLiteral(url) && url.getLiteralText() === '') ctx.marker(url, 'client-url');
      const scope = statementOf(decl)?.getParent();
      if (!scope) continue;
      const uses = referencesTo(scope, decl.getName(), sameVariable(decl)).filter((id) => {
        const p = id.getParent();
        return !(p && Node.isPropertyAccessExpression(p) && p.getExpression() === id && LIFECYCLE.has(p.getName()));
      });
      if (uses.length === 0) {
        ctx.marker(decl, 'sdk-client-unused');
        continue;
      }
      const movedHandler = options && Node.isObjectLiteralExpression(options) && options.getProperty('onInputRequest') !== undefined;
      const stillHandled = referencesTo(scope, decl.getName(), sameVariable(decl)).some((id) => {
        const call = id.getParent()?.getParent();
        return call !== undefined && Node.isCallExpression(call) && id.getParent()!.getText().endsWith('.setRequestHandler') && ctx.mcp.isSdkExport(call.getArguments()[0], 'ElicitRequestSchema');
      });
      if (movedHandler && !stillHandled) ctx.marker(tc, 'elicitation-moved');
    }
  },
};

/** After a file changed: drops imports of the SDK (or a re-exporting module) that the rewrites left unused. */
export const importCleanup: Transform = {
  name: 'import-cleanup',
  description: 'removes SDK imports the rewrites made unused',
  triggers: ['import', 'require'],
  phase: 9,
  run(ctx) {
    const before = ctx.facts.importRefsBefore;
    if (before.size === 0) return;
    const now = importReferenceCounts(ctx.sourceFile, ctx.mcp);
    const unused = (name: string): boolean => (before.get(name) ?? 0) > 0 && (now.get(name) ?? 0) === 0;
    for (const decl of ctx.sourceFile.getImportDeclarations()) {
      if (isMcpModule(decl.getModuleSpecifierValue(), ctx.mcp)) cleanImport(ctx, decl, unused);
    }
    for (const st of ctx.sourceFile.getVariableStatements()) cleanRequire(ctx, st, unused);
  },
};

function cleanImport(ctx: TransformContext, decl: ImportDeclaration, unused: (name: string) => boolean): void {
  const clause = decl.getImportClause();
  const bindings = clause?.getNamedBindings();
  if (!clause || clause.getDefaultImport() || !bindings) return;
  if (Node.isNamespaceImport(bindings)) {
    if (unused(bindings.getName())) ctx.removeStatement(decl);
    return;
  }
  const elements = bindings.getElements();
  const kept = elements.filter((el) => !unused(el.getAliasNode()?.getText() ?? el.getName()));
  if (kept.length === elements.length) return;
  if (kept.length === 0) {
    ctx.removeStatement(decl);
    return;
  }
  const allTypes = !decl.isTypeOnly() && kept.every((el) => el.isTypeOnly());
  const texts = kept.map((el) => (allTypes ? el.getText().replace(/^type\s+/, '') : el.getText()));
  const multiline = bindings.getText().includes('\n');
  const list = multiline
    ? `{\n${texts.map((t) => `${indentationAt(ctx.text, elements[0]!.getStart())}${t},`).join('\n')}\n}`
    : `{ ${texts.join(', ')} }`;
  if (allTypes) ctx.edit(decl.getStart(), bindings.getEnd(), `import type ${list}`);
  else ctx.replaceNode(bindings, list);
}

function cleanRequire(ctx: TransformContext, st: VariableStatement, unused: (name: string) => boolean): void {
  const decls = st.getDeclarations();
  if (decls.length !== 1) return;
  const decl = decls[0]!;
  const init = decl.getInitializer();
  const spec = init ? moduleCallSpec(init) : undefined;
  if (!spec || !isMcpModule(spec, ctx.mcp)) return;
  const name = decl.getNameNode();
  if (Node.isIdentifier(name)) {
    if (unused(name.getText())) ctx.removeStatement(st);
    return;
  }
  if (!Node.isObjectBindingPattern(name)) return;
  const elements = name.getElements();
  const kept = elements.filter((el) => !unused(el.getName()));
  if (kept.length === elements.length) return;
  if (kept.length === 0) ctx.removeStatement(st);
  else ctx.replaceNode(name, `{ ${kept.map((el) => el.getText()).join(', ')} }`);
}
