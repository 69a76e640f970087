import { Node, SyntaxKind, ts, type VariableDeclaration } from 'ts-morph';
import { expressionAt, semi } from './codegen.js';
import { plainPropertyNames, propertyValue, statementOf } from './mcp-calls.js';
import { nodesOfKind } from './raw.js';
import { isReference, referencesTo, resolveIdentifier, sameVariable } from './scope.js';
import { endOfLine, indentationAt } from './text.js';
import type { TransformContext } from './transforms/types.js';

interface ClientPlan {
  name: string;
  /** The statement the construction goes after. */
  anchor: Node;
}

/**
 * The TasksClient that replaces an SDK Client's task calls: found when the file already has one
 * for that client (a re-run, or an earlier pass), else planned once per pass, right after the
 * client's `connect` (or its declaration), with the URL, clientInfo and capabilities read from
 * the SDK client's construction.
 */
export class ClientSetup {
  private readonly plans = new Map<VariableDeclaration, ClientPlan>();

  constructor(private readonly ctx: TransformContext) {}

  forSite(clientDecl: VariableDeclaration, site: Node): string | undefined {
    const existing = this.existingTasksClientName(clientDecl, site);
    if (existing !== undefined) return existing || undefined;
    const planned = this.plans.get(clientDecl);
    if (planned) return visibleAfter(planned.anchor, site) ? planned.name : undefined;
    return this.planTasksClient(clientDecl, site);
  }

  /** A `new TasksClient(...)` already in the file for this client: its name, '' when it is there but out of reach of `site`, undefined when none. */
  private existingTasksClientName(clientDecl: VariableDeclaration, site: Node): string | undefined {
    const candidates = this.tasksClientCandidates(clientDecl);
    if (candidates.length === 0) return undefined;
    const reachable = candidates.find((d) => {
      const st = statementOf(d);
      return st !== undefined && visibleAfter(st, site);
    });
    return reachable ? reachable.getName() : '';
  }

  existing(clientDecl: VariableDeclaration): VariableDeclaration | undefined {
    return this.tasksClientCandidates(clientDecl)[0];
  }

  /** TasksClient declarations after the SDK client's, in its scope; the one named after the client first. */
  private tasksClientCandidates(clientDecl: VariableDeclaration): VariableDeclaration[] {
    const clientStatement = statementOf(clientDecl);
    const scope = clientStatement?.getParent();
    if (!clientStatement || !scope) return [];
    const derived = derivedName(clientDecl.getName());
    const candidates = nodesOfKind<VariableDeclaration>(this.ctx.sourceFile, SyntaxKind.VariableDeclaration, scope, (n) => {
      const init = (n as ts.VariableDeclaration).initializer;
      return init !== undefined && ts.isNewExpression(init) && init.pos > clientDecl.getEnd();
    }).filter((d) => Node.isIdentifier(d.getNameNode()) && this.isTasksClientConstruction(d));
    return candidates.sort((a, b) => Number(b.getName() === derived) - Number(a.getName() === derived));
  }

  isTasksClientConstruction(decl: VariableDeclaration): boolean {
    const init = decl.getInitializer();
    return init !== undefined && Node.isNewExpression(init) && this.ctx.mcp.isHelperExport(init.getExpression(), 'TasksClient');
  }

  private planTasksClient(clientDecl: VariableDeclaration, site: Node): string | undefined {
    const declStatement = statementOf(clientDecl);
    if (!declStatement) return undefined;
    const scope = declStatement.getParent()!;
    const connects = referencesTo(scope, clientDecl.getName(), sameVariable(clientDecl))
      .map((id) => id.getParent())
      .filter((p): p is Node => p !== undefined && Node.isPropertyAccessExpression(p) && p.getName() === 'connect' && Node.isCallExpression(p.getParent()))
      .map((p) => p.getParentOrThrow().asKindOrThrow(SyntaxKind.CallExpression));
    const connectStatements = connects.map((call) => ({ call, statement: statementOf(call) })).filter((c) => c.statement && c.statement.getStart() > declStatement.getEnd());
    const viaConnect = connectStatements.find((c) => visibleAfter(c.statement!, site));
    const anchor = viaConnect?.statement ?? (visibleAfter(declStatement, site) ? declStatement : undefined);
    if (!anchor) return undefined;
    const transport = (viaConnect ?? connectStatements[0])?.call.getArguments()[0];
    const url = this.urlFor(transport, anchor);
    // No Streamable HTTP URL in reach (an in-memory or custom transport, a URL from elsewhere):
    // tasksClientFor(client) reads it from the connected transport, or says why it cannot.
    if (url === undefined) return undefined;
    const name = this.ctx.fresh(derivedName(clientDecl.getName()), anchor);
    this.plans.set(clientDecl, { name, anchor });

    const indent = indentationAt(this.ctx.text, anchor.getStart());
    const inner = indent + this.ctx.style.indent;
    const props = [`${inner}url: ${url},`];
    const init = clientDecl.getInitializer();
    const [info, opts] = init && Node.isNewExpression(init) ? init.getArguments() : [];
    if (info && (Node.isIdentifier(info) || (Node.isObjectLiteralExpression(info) && sameMembers(plainPropertyNames(info), ['name', 'version'])))) {
      props.push(`${inner}clientInfo: ${expressionAt(this.ctx.sourceFile, this.ctx.text, info, inner)},`);
    }
    if (opts && Node.isObjectLiteralExpression(opts)) {
      const caps = propertyValue(opts, 'capabilities');
      if (caps) props.push(`${inner}capabilities: ${expressionAt(this.ctx.sourceFile, this.ctx.text, caps, inner)},`);
    }
    const construction = `${indent}const ${name} = new TasksClient({\n${props.join('\n')}\n${indent}})${semi(this.ctx.style)}`;
    const at = endOfLine(this.ctx.text, anchor.getEnd());
    this.ctx.edit(at, at, `\n${construction}`);
    this.ctx.importFromHelper(['TasksClient']);
    return name;
  }

  /** The endpoint URL as code, when the transport is a Streamable HTTP one whose URL is in reach of `anchor`. */
  private urlFor(transport: Node | undefined, anchor: Node): string | undefined {
    let expr = transport;
    if (expr && Node.isIdentifier(expr)) {
      const binding = resolveIdentifier(expr);
      expr = binding?.kind === 'variable' && !binding.element ? binding.decl.getInitializer() : undefined;
    }
    if (!expr || !Node.isNewExpression(expr) || !this.ctx.mcp.isSdkExport(expr.getExpression(), 'StreamableHTTPClientTransport')) return undefined;
    const arg = expr.getArguments()[0];
    if (!arg) return undefined;
    for (const id of [arg, ...arg.getDescendantsOfKind(SyntaxKind.Identifier)]) {
      if (!Node.isIdentifier(id) || !isReference(id)) continue;
      const binding = resolveIdentifier(id);
      if (!binding) continue; // a global (URL, process)
      const declared = binding.kind === 'variable' ? binding.decl : binding.kind === 'parameter' ? binding.param : binding.kind === 'declaration' ? binding.node : binding.decl;
      if (declared.getEnd() > anchor.getEnd() || !isAncestorOrSelf(binding.scope, anchor)) return undefined;
    }
    const code = arg.getText();
    if (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg) || Node.isTemplateExpression(arg)) return code;
    if (Node.isNewExpression(arg) && arg.getExpression().getText() === 'URL') return `${code}.href`;
    return `String(${code})`;
  }
}

/** `client` → `tasksClient`, `mcpClient` → `mcpTasksClient`, `mcp` → `mcpTasksClient`. */
export function derivedName(clientName: string): string {
  if (clientName === 'client') return 'tasksClient';
  if (clientName.endsWith('Client')) return `${clientName.slice(0, -'Client'.length)}TasksClient`;
  return `${clientName}TasksClient`;
}

function sameMembers(a: string[] | undefined, allowed: string[]): boolean {
  return a !== undefined && a.length > 0 && a.every((n) => allowed.includes(n));
}

/** `site` runs after `statement` in its block (or in a block nested in it). */
export function visibleAfter(statement: Node, site: Node): boolean {
  const block = statement.getParent();
  return block !== undefined && isAncestorOrSelf(block, site) && site.getStart() >= statement.getEnd();
}

function isAncestorOrSelf(ancestor: Node, node: Node): boolean {
  return node.getStart() >= ancestor.getStart() && node.getEnd() <= ancestor.getEnd() && (ancestor === node || node.getAncestors().includes(ancestor));
}

