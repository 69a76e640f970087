import { Node, SyntaxKind, ts, type Project, type SourceFile, type VariableDeclaration } from 'ts-morph';
import { expressionAt, quoted, semi, unusedName } from './codegen.js';
import { applyEdits, mapOffset, sortEdits, type Edit } from './edits.js';
import { hasMarker, markerComment, MARKERS, type MarkerCode } from './markers.js';
import { resolveClient, matchRawRequest, statementOf, propertyValue, plainPropertyNames } from './mcp-calls.js';
import { CLIENT_HELPER_MODULE, McpResolver, moduleCallSpec } from './mcp-imports.js';
import { scriptKindOf, type ReexportIndex } from './reexports.js';
import { isPropertyName, isReference, referencesTo, resolveIdentifier, sameVariable } from './scope.js';
import { closeEnvelope, detectStyle, indentationAt, lineColumn, lineStartOf, openEnvelope, startsLine, type CodeStyle } from './text.js';
import type { FileFacts, Transform, TransformContext } from './transforms/types.js';

/** How many times one transform may run on one file before the file counts as broken (a transform that never settles). */
const MAX_ROUNDS = 8;

export interface FileRow {
  line: number;
  column: number;
  transform: string;
  code: MarkerCode | 'parse-error' | 'transform-error';
  message: string;
}

export interface FileResult {
  output: string;
  parsed: boolean;
  rows: FileRow[];
  rewrites: Record<string, number>;
  failed: boolean;
}

export interface FileRunOptions {
  transforms: readonly Transform[];
  /** Run after the transforms when the file changed (marker checks, import clean-up). */
  finishing: readonly Transform[];
  noTodos: boolean;
  reexports: ReexportIndex;
}

interface PendingRow {
  round: number;
  offset: number;
  transform: string;
  code: MarkerCode;
  message: string;
}

/** Parse diagnostics of a file (syntax only: no program, no type checker). */
export function syntaxErrors(sf: SourceFile): ts.DiagnosticWithLocation[] {
  return (sf.compilerNode as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

/**
 * Runs the transforms on one file's text, all in memory. Either every transform succeeds and the
 * result is the new text, or the file is left as it was and one error row says why.
 */
export function runFile(project: Project, path: string, raw: string, options: FileRunOptions): FileResult {
  const envelope = openEnvelope(raw);
  let text = envelope.text;
  let sf = project.createSourceFile(path, text, { overwrite: true, scriptKind: scriptKindOf(path) });
  const rewrites: Record<string, number> = {};
  const rounds: Edit[][] = [];
  const pending: PendingRow[] = [];
  let current = 'parser';
  try {
    const errors = syntaxErrors(sf);
    if (errors.length > 0) {
      const first = errors[0]!;
      const where = lineColumn(text, first.start ?? 0);
      return { output: raw, parsed: false, failed: true, rewrites, rows: [{ ...where, transform: 'parser', code: 'parse-error', message: `does not parse (${ts.flattenDiagnosticMessageText(first.messageText, ' ').replace(/\.$/, '')}); skipped` }] };
    }
    const facts = computeFacts(sf, path, options.reexports);
    const reparse = (next: string): void => {
      project.removeSourceFile(sf);
      text = next;
      sf = project.createSourceFile(path, text, { overwrite: true, scriptKind: scriptKindOf(path) });
    };
    const runOne = (transform: Transform): void => {
      current = transform.name;
      if (!transform.triggers.some((t) => text.includes(t))) return;
      for (let round = 0; ; round++) {
        if (round >= MAX_ROUNDS) throw new Error(`${transform.name} did not settle after ${MAX_ROUNDS} rounds`);
        const ctx = new PassContext(sf, text, path, options, facts, transform.name, rounds.length, pending, rewrites);
        transform.run(ctx);
        const edits = ctx.finish();
        if (edits.length === 0) return;
        const next = applyEdits(text, edits);
        rounds.push(sortEdits(edits));
        if (next === text) return;
        reparse(next);
        const broken = syntaxErrors(sf)[0];
        if (broken) throw new Error(`it produced code that does not parse (${ts.flattenDiagnosticMessageText(broken.messageText, ' ')} at ${JSON.stringify(lineColumn(text, broken.start ?? 0))})`);
      }
    };
    for (const transform of options.transforms) runOne(transform);
    if (text !== envelope.text) for (const transform of options.finishing) runOne(transform);
    current = 'output check';
    if (text !== envelope.text && syntaxErrors(sf).length > 0) {
      const first = syntaxErrors(sf)[0]!;
      throw new Error(`the rewritten file does not parse (${ts.flattenDiagnosticMessageText(first.messageText, ' ')} at ${JSON.stringify(lineColumn(text, first.start ?? 0))})`);
    }
    const rows = new Map<string, FileRow>();
    for (const row of pending) {
      let offset = row.offset;
      for (let r = row.round; r < rounds.length; r++) offset = mapOffset(offset, rounds[r]!);
      const where = lineColumn(text, offset);
      const key = `${where.line}:${where.column}:${row.code}:${row.transform}`;
      if (!rows.has(key)) rows.set(key, { ...where, transform: row.transform, code: row.code, message: row.message });
    }
    const sorted = [...rows.values()].sort((a, b) => a.line - b.line || a.column - b.column);
    return { output: text === envelope.text ? raw : closeEnvelope(envelope, text), parsed: true, failed: false, rewrites, rows: sorted };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      output: raw,
      parsed: true,
      failed: true,
      rewrites: {},
      rows: [{ line: 1, column: 1, transform: current, code: 'transform-error', message: `${current} failed, file left untouched: ${message}` }],
    };
  } finally {
    project.removeSourceFile(sf);
  }
}

function computeFacts(sf: SourceFile, path: string, reexports: ReexportIndex): FileFacts {
  const mcp = new McpResolver(sf, path, reexports);
  const hasMcpImport = mcp.hasMcpImport();
  let usesDialect = false;
  if (hasMcpImport && /tasks\/(create|status)/.test(sf.getFullText())) {
    usesDialect = sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => {
      const raw = matchRawRequest(call);
      return raw !== undefined && (raw.method === 'tasks/create' || raw.method === 'tasks/status') && resolveClient(raw.receiver, mcp).kind !== 'unknown';
    });
  }
  return { hasMcpImport, usesDialect, importRefsBefore: importReferenceCounts(sf, mcp) };
}

/** How often each name imported (or required) from the SDK, a re-exporting module or the helper is referenced. */
export function importReferenceCounts(sf: SourceFile, mcp: McpResolver): Map<string, number> {
  const counts = new Map<string, number>();
  const names = new Set<string>();
  for (const decl of sf.getImportDeclarations()) {
    if (!isMcpModule(decl.getModuleSpecifierValue(), mcp)) continue;
    const bindings = decl.getImportClause()?.getNamedBindings();
    if (bindings && Node.isNamedImports(bindings)) for (const el of bindings.getElements()) names.add(el.getAliasNode()?.getText() ?? el.getName());
    if (bindings && Node.isNamespaceImport(bindings)) names.add(bindings.getName());
  }
  for (const st of sf.getVariableStatements()) {
    for (const decl of st.getDeclarations()) {
      const init = decl.getInitializer();
      const spec = init ? moduleCallSpec(init) : undefined;
      if (!spec || !isMcpModule(spec, mcp)) continue;
      const name = decl.getNameNode();
      if (Node.isIdentifier(name)) names.add(name.getText());
      else if (Node.isObjectBindingPattern(name)) for (const el of name.getElements()) names.add(el.getName());
    }
  }
  if (names.size === 0) return counts;
  for (const id of sf.getDescendantsOfKind(SyntaxKind.Identifier)) {
    const name = id.getText();
    if (!names.has(name) || isPropertyName(id)) continue;
    const parent = id.getParent();
    if (parent && (Node.isImportSpecifier(parent) || Node.isNamespaceImport(parent) || Node.isBindingElement(parent) || (Node.isVariableDeclaration(parent) && parent.getNameNode() === id))) continue;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

export function isMcpModule(spec: string, mcp: McpResolver): boolean {
  if (spec === CLIENT_HELPER_MODULE || spec.startsWith('@modelcontextprotocol/sdk')) return true;
  return spec.startsWith('.') && mcp.localReexportsAnything(spec);
}

interface ClientPlan {
  name: string;
  /** The statement the construction goes after. */
  anchor: Node;
}

/** One run of one transform over one version of the file. */
class PassContext implements TransformContext {
  readonly isTypeScript: boolean;
  readonly moduleKind: 'esm' | 'cjs';
  readonly style: CodeStyle;
  readonly mcp: McpResolver;
  private readonly edits: Edit[] = [];
  private readonly markerKeys = new Set<string>();
  private readonly reserved = new Set<string>();
  private identifiers: Set<string> | undefined;
  private readonly plans = new Map<VariableDeclaration, ClientPlan>();
  private readonly helperValues = new Set<string>();
  private readonly helperTypes = new Set<string>();
  private readonly sdkTypes = new Map<string, Set<string>>();

  constructor(
    readonly sourceFile: SourceFile,
    readonly text: string,
    readonly filePath: string,
    private readonly options: FileRunOptions,
    readonly facts: FileFacts,
    private readonly transform: string,
    private readonly round: number,
    private readonly pending: PendingRow[],
    private readonly rewrites: Record<string, number>,
  ) {
    this.isTypeScript = /\.[cm]?tsx?$/.test(filePath);
    this.mcp = new McpResolver(sourceFile, filePath, options.reexports);
    this.style = detectStyle(text);
    const hasImports = sourceFile.getImportDeclarations().length > 0;
    this.moduleKind = hasImports ? 'esm' : /\.c[jt]s$/.test(filePath) || /\brequire\s*\(/.test(text) ? 'cjs' : 'esm';
  }

  isFree(start: number, end: number): boolean {
    return this.edits.every((e) => {
      if (e.start === e.end) return e.start <= start || e.start >= end;
      if (start === end) return start <= e.start || start >= e.end;
      return end <= e.start || start >= e.end;
    });
  }

  edit(start: number, end: number, text: string): boolean {
    if (!this.isFree(start, end)) return false;
    this.edits.push({ start, end, text });
    return true;
  }

  replaceNode(node: Node, text: string): boolean {
    return this.edit(node.getStart(), node.getEnd(), text);
  }

  removeStatement(statement: Node): boolean {
    const text = this.text;
    const ranges = statement.getLeadingCommentRanges();
    let start = ranges[0]?.getPos() ?? statement.getStart();
    let end = statement.getEnd();
    if (startsLine(text, start)) {
      const lineEnd = text.indexOf('\n', end);
      if (lineEnd !== -1 && /^[ \t]*(\/\/[^\n]*)?$/.test(text.slice(end, lineEnd))) {
        start = lineStartOf(text, start);
        end = lineEnd + 1;
      }
    }
    return this.edit(start, end, '');
  }

  marker(node: Node, code: MarkerCode): void {
    this.pending.push({ round: this.round, offset: node.getStart(), transform: this.transform, code, message: MARKERS[code].instruction });
    if (this.options.noTodos) return;
    const anchor = markerAnchor(node);
    const key = `${anchor.getStart()}:${code}`;
    if (this.markerKeys.has(key)) return;
    this.markerKeys.add(key);
    const leading = this.text.slice(anchor.getFullStart(), anchor.getStart());
    if (hasMarker(leading, code)) return;
    const start = anchor.getStart();
    if (startsLine(this.text, start)) {
      const lineStart = lineStartOf(this.text, start);
      this.edit(lineStart, lineStart, `${indentationAt(this.text, start)}${markerComment(code)}\n`);
    } else {
      this.edit(start, start, `/* ${markerComment(code).slice(3)} */ `);
    }
  }

  rewrote(): void {
    this.rewrites[this.transform] = (this.rewrites[this.transform] ?? 0) + 1;
  }

  fresh(base: string, near?: Node): string {
    const scope = near?.getFirstAncestor((a) => Node.isFunctionDeclaration(a) || Node.isFunctionExpression(a) || Node.isArrowFunction(a) || Node.isMethodDeclaration(a) || Node.isConstructorDeclaration(a));
    let taken: Set<string>;
    if (scope) {
      taken = new Set(scope.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => !isPropertyName(id)).map((id) => id.getText()));
    } else {
      if (!this.identifiers) this.identifiers = new Set(this.sourceFile.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => !isPropertyName(id)).map((id) => id.getText()));
      taken = this.identifiers;
    }
    const name = unusedName(base, new Set([...taken, ...this.reserved]));
    this.reserved.add(name);
    return name;
  }

  // ---- the TasksClient next to an SDK Client ----------------------------------------------

  tasksClientFor(clientDecl: VariableDeclaration, site: Node): string | undefined {
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

  existingTasksClient(clientDecl: VariableDeclaration): VariableDeclaration | undefined {
    return this.tasksClientCandidates(clientDecl)[0];
  }

  /** TasksClient declarations after the SDK client's, in its scope; the one named after the client first. */
  private tasksClientCandidates(clientDecl: VariableDeclaration): VariableDeclaration[] {
    const clientStatement = statementOf(clientDecl);
    const scope = clientStatement?.getParent();
    if (!clientStatement || !scope) return [];
    const derived = derivedName(clientDecl.getName());
    const candidates = scope
      .getDescendantsOfKind(SyntaxKind.VariableDeclaration)
      .filter((d) => d.getStart() > clientDecl.getEnd() && Node.isIdentifier(d.getNameNode()) && this.isTasksClientConstruction(d));
    return candidates.sort((a, b) => Number(b.getName() === derived) - Number(a.getName() === derived));
  }

  isTasksClientConstruction(decl: VariableDeclaration): boolean {
    const init = decl.getInitializer();
    return init !== undefined && Node.isNewExpression(init) && this.mcp.isHelperExport(init.getExpression(), 'TasksClient');
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
    const name = this.fresh(derivedName(clientDecl.getName()), anchor);
    this.plans.set(clientDecl, { name, anchor });

    const indent = indentationAt(this.text, anchor.getStart());
    const inner = indent + this.style.indent;
    const props = [`${inner}url: ${url ?? "''"},`];
    const init = clientDecl.getInitializer();
    const [info, opts] = init && Node.isNewExpression(init) ? init.getArguments() : [];
    if (info && (Node.isIdentifier(info) || (Node.isObjectLiteralExpression(info) && sameMembers(plainPropertyNames(info), ['name', 'version'])))) {
      props.push(`${inner}clientInfo: ${expressionAt(this.sourceFile, this.text, info, inner)},`);
    }
    if (opts && Node.isObjectLiteralExpression(opts)) {
      const caps = propertyValue(opts, 'capabilities');
      if (caps) props.push(`${inner}capabilities: ${expressionAt(this.sourceFile, this.text, caps, inner)},`);
    }
    const construction = `${indent}const ${name} = new TasksClient({\n${props.join('\n')}\n${indent}})${semi(this.style)}`;
    const at = endOfLine(this.text, anchor.getEnd());
    this.edit(at, at, `\n${construction}`);
    this.importFromHelper(['TasksClient']);
    return name;
  }

  /** The endpoint URL as code, when the transport is a Streamable HTTP one whose URL is in reach of `anchor`. */
  private urlFor(transport: Node | undefined, anchor: Node): string | undefined {
    let expr = transport;
    if (expr && Node.isIdentifier(expr)) {
      const binding = resolveIdentifier(expr);
      expr = binding?.kind === 'variable' && !binding.element ? binding.decl.getInitializer() : undefined;
    }
    if (!expr || !Node.isNewExpression(expr) || !this.mcp.isSdkExport(expr.getExpression(), 'StreamableHTTPClientTransport')) return undefined;
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

  // ---- imports -----------------------------------------------------------------------------

  importFromHelper(values: string[], types: string[] = []): void {
    for (const v of values) this.helperValues.add(v);
    if (this.isTypeScript) for (const t of types) this.helperTypes.add(t);
  }

  importSdkType(name: string, module: string): string {
    for (const decl of this.sourceFile.getImportDeclarations()) {
      if (!decl.getModuleSpecifierValue().startsWith('@modelcontextprotocol/sdk')) continue;
      const bindings = decl.getImportClause()?.getNamedBindings();
      if (bindings && Node.isNamespaceImport(bindings) && decl.getModuleSpecifierValue() === module) return `${bindings.getName()}.${name}`;
      if (bindings && Node.isNamedImports(bindings)) {
        const found = bindings.getElements().find((el) => el.getName() === name);
        if (found) return found.getAliasNode()?.getText() ?? name;
      }
    }
    const planned = this.sdkTypes.get(module) ?? new Set<string>();
    this.sdkTypes.set(module, planned);
    const taken = this.sourceFile.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === name && !isPropertyName(id));
    const local = taken ? `Sdk${name}` : name;
    planned.add(taken ? `${name} as ${local}` : name);
    return local;
  }

  /** The pass's edits, with the imports it asked for. */
  finish(): Edit[] {
    if (this.helperValues.size > 0 || this.helperTypes.size > 0) this.emitHelperImport();
    for (const [module, names] of this.sdkTypes) this.emitTypeImport(module, [...names]);
    return this.edits;
  }

  private emitHelperImport(): void {
    const q = (s: string): string => quoted(this.style, s);
    const decls = this.sourceFile.getImportDeclarations().filter((d) => d.getModuleSpecifierValue() === CLIENT_HELPER_MODULE && !d.isTypeOnly());
    const valueDecl = decls.find((d) => {
      const b = d.getImportClause()?.getNamedBindings();
      return b !== undefined && Node.isNamedImports(b);
    });
    const values = [...this.helperValues];
    const types = [...this.helperTypes];
    if (valueDecl) {
      const named = valueDecl.getImportClause()!.getNamedBindings()!.asKindOrThrow(SyntaxKind.NamedImports);
      const have = new Set(named.getElements().map((e) => e.getName()));
      const add = [...values.filter((v) => !have.has(v)), ...types.filter((t) => !have.has(t)).map((t) => `type ${t}`)];
      this.addToNamedList(named, add);
      return;
    }
    if (this.moduleKind === 'cjs' && values.length > 0) {
      const existing = this.cjsHelperPattern();
      if (existing) {
        const have = new Set(existing.getElements().map((e) => e.getName()));
        this.addToNamedList(existing, values.filter((v) => !have.has(v)));
      } else {
        this.insertTopLevel(`const { ${values.join(', ')} } = require(${q(CLIENT_HELPER_MODULE)})${semi(this.style)}`);
      }
      if (types.length > 0) this.insertTopLevel(`import type { ${types.join(', ')} } from ${q(CLIENT_HELPER_MODULE)}${semi(this.style)}`);
      return;
    }
    const specs = [...values, ...types.map((t) => (values.length > 0 ? `type ${t}` : t))];
    const head = values.length > 0 ? 'import' : 'import type';
    this.insertTopLevel(`${head} { ${specs.join(', ')} } from ${q(CLIENT_HELPER_MODULE)}${semi(this.style)}`);
  }

  private emitTypeImport(module: string, names: string[]): void {
    if (!this.isTypeScript || names.length === 0) return;
    const decl = this.sourceFile.getImportDeclarations().find((d) => {
      const b = d.getImportClause()?.getNamedBindings();
      return d.getModuleSpecifierValue() === module && b !== undefined && Node.isNamedImports(b);
    });
    if (decl) {
      const named = decl.getImportClause()!.getNamedBindings()!.asKindOrThrow(SyntaxKind.NamedImports);
      const have = new Set(named.getElements().map((e) => e.getName()));
      this.addToNamedList(named, names.filter((n) => !have.has(n.split(' as ')[0]!)).map((n) => (decl.isTypeOnly() ? n : `type ${n}`)));
      return;
    }
    this.insertTopLevel(`import type { ${names.join(', ')} } from ${quoted(this.style, module)}${semi(this.style)}`);
  }

  private cjsHelperPattern(): Node & { getElements(): Array<{ getName(): string; getEnd(): number }> } | undefined {
    for (const st of this.sourceFile.getVariableStatements()) {
      for (const decl of st.getDeclarations()) {
        const init = decl.getInitializer();
        const name = decl.getNameNode();
        if (init && Node.isCallExpression(init) && init.getExpression().getText() === 'require' && init.getArguments()[0]?.getText().slice(1, -1) === CLIENT_HELPER_MODULE && Node.isObjectBindingPattern(name)) {
          return name as never;
        }
      }
    }
    return undefined;
  }

  private addToNamedList(list: Node & { getElements(): Array<{ getEnd(): number }> }, add: string[]): void {
    if (add.length === 0) return;
    const elements = list.getElements();
    const last = elements[elements.length - 1];
    if (last) this.edit(last.getEnd(), last.getEnd(), `, ${add.join(', ')}`);
    else this.edit(list.getStart() + 1, list.getStart() + 1, ` ${add.join(', ')} `);
  }

  /** After the last import (or top-level require), else before the first statement. */
  private insertTopLevel(line: string): void {
    const statements = this.sourceFile.getStatements();
    const isRequire = (st: Node): boolean => Node.isVariableStatement(st) && /^\s*(const|let|var)\b[^=]*=\s*require\s*\(/.test(st.getText());
    const imports = statements.filter((st) => Node.isImportDeclaration(st) || Node.isImportEqualsDeclaration(st) || (this.moduleKind === 'cjs' && isRequire(st)));
    const lastImport = imports[imports.length - 1];
    if (lastImport) {
      const at = endOfLine(this.text, lastImport.getEnd());
      this.edit(at, at, `\n${line}`);
      return;
    }
    const first = statements.find((st) => !(Node.isExpressionStatement(st) && /^['"]use strict['"];?$/.test(st.getText())));
    if (first) {
      const at = first.getStart();
      this.edit(at, at, `${line}\n${startsLine(this.text, at) ? '' : '\n'}`);
    } else {
      const at = this.text.length;
      this.edit(at, at, `${this.text.endsWith('\n') || at === 0 ? '' : '\n'}${line}\n`);
    }
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

/** Where to put a new line after `offset`: past a trailing comment on the same line. */
function endOfLine(text: string, offset: number): number {
  const lineEnd = text.indexOf('\n', offset);
  const rest = text.slice(offset, lineEnd === -1 ? text.length : lineEnd);
  return /^[ \t]*(\/\/.*|\/\*.*\*\/[ \t]*)?$/.test(rest) ? (lineEnd === -1 ? text.length : lineEnd) : offset;
}

/** Where a marker goes: above the statement (or class member) that holds the node. */
function markerAnchor(node: Node): Node {
  for (let cur: Node | undefined = node; cur; cur = cur.getParent()) {
    const parent = cur.getParent();
    if (!parent) break;
    if (Node.isBlock(parent) || Node.isSourceFile(parent) || Node.isModuleBlock(parent) || Node.isCaseClause(parent) || Node.isDefaultClause(parent)) return cur;
    if (Node.isClassDeclaration(parent) || Node.isClassExpression(parent)) return cur;
  }
  return node;
}
