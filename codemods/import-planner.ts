import { Node, SyntaxKind, ts, type SourceFile } from 'ts-morph';
import { quoted, semi } from './codegen.js';
import { CLIENT_HELPER_MODULE, moduleCallSpec, type McpResolver } from './mcp-imports.js';
import { bindingNames, findRaw, isRawPropertyName } from './raw.js';
import { endOfLine, startsLine } from './text.js';
import type { TransformContext } from './transforms/types.js';

/**
 * The imports a pass asks for: values and types from the client helper (one import, or one
 * require in CommonJS), types from the SDK next to the file's existing SDK import. Emitted once at
 * the end of the pass, after the last import of the file.
 */
export class ImportPlanner {
  private readonly helperValues = new Set<string>();
  private readonly helperTypes = new Set<string>();
  private readonly sdkTypes = new Map<string, Set<string>>();

  constructor(private readonly ctx: TransformContext) {}

  fromHelper(values: string[], types: string[] = []): void {
    for (const v of values) this.helperValues.add(v);
    if (this.ctx.isTypeScript) for (const t of types) this.helperTypes.add(t);
  }

  sdkType(name: string, module: string): string {
    for (const decl of this.ctx.sourceFile.getImportDeclarations()) {
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
    const taken = bindingNames(this.ctx.sourceFile.compilerNode).has(name);
    const local = taken ? `Sdk${name}` : name;
    planned.add(taken ? `${name} as ${local}` : name);
    return local;
  }

  /** Turns what the pass asked for into edits (once, at the end of the pass). */
  emit(): void {
    if (this.helperValues.size > 0 || this.helperTypes.size > 0) this.emitHelperImport();
    for (const [module, names] of this.sdkTypes) this.emitTypeImport(module, [...names]);
  }

  private emitHelperImport(): void {
    const q = (s: string): string => quoted(this.ctx.style, s);
    const decls = this.ctx.sourceFile.getImportDeclarations().filter((d) => d.getModuleSpecifierValue() === CLIENT_HELPER_MODULE && !d.isTypeOnly());
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
    if (this.ctx.moduleKind === 'cjs' && values.length > 0) {
      const existing = this.cjsHelperPattern();
      if (existing) {
        const have = new Set(existing.getElements().map((e) => e.getName()));
        this.addToNamedList(existing, values.filter((v) => !have.has(v)));
      } else {
        this.insertTopLevel(`const { ${values.join(', ')} } = require(${q(CLIENT_HELPER_MODULE)})${semi(this.ctx.style)}`);
      }
      if (types.length > 0) this.insertTopLevel(`import type { ${types.join(', ')} } from ${q(CLIENT_HELPER_MODULE)}${semi(this.ctx.style)}`);
      return;
    }
    const specs = [...values, ...types.map((t) => (values.length > 0 ? `type ${t}` : t))];
    const head = values.length > 0 ? 'import' : 'import type';
    this.insertTopLevel(`${head} { ${specs.join(', ')} } from ${q(CLIENT_HELPER_MODULE)}${semi(this.ctx.style)}`);
  }

  private emitTypeImport(module: string, names: string[]): void {
    if (!this.ctx.isTypeScript || names.length === 0) return;
    const decl = this.ctx.sourceFile.getImportDeclarations().find((d) => {
      const b = d.getImportClause()?.getNamedBindings();
      return d.getModuleSpecifierValue() === module && b !== undefined && Node.isNamedImports(b);
    });
    if (decl) {
      const named = decl.getImportClause()!.getNamedBindings()!.asKindOrThrow(SyntaxKind.NamedImports);
      const have = new Set(named.getElements().map((e) => e.getName()));
      this.addToNamedList(named, names.filter((n) => !have.has(n.split(' as ')[0]!)).map((n) => (decl.isTypeOnly() ? n : `type ${n}`)));
      return;
    }
    this.insertTopLevel(`import type { ${names.join(', ')} } from ${quoted(this.ctx.style, module)}${semi(this.ctx.style)}`);
  }

  private cjsHelperPattern(): Node & { getElements(): Array<{ getName(): string; getEnd(): number }> } | undefined {
    for (const st of this.ctx.sourceFile.getVariableStatements()) {
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
    if (last) this.ctx.edit(last.getEnd(), last.getEnd(), `, ${add.join(', ')}`);
    else this.ctx.edit(list.getStart() + 1, list.getStart() + 1, ` ${add.join(', ')} `);
  }

  /** After the last import (or top-level require), else before the first statement. */
  private insertTopLevel(line: string): void {
    const statements = this.ctx.sourceFile.getStatements();
    const isRequire = (st: Node): boolean => Node.isVariableStatement(st) && /^\s*(const|let|var)\b[^=]*=\s*require\s*\(/.test(st.getText());
    const imports = statements.filter((st) => Node.isImportDeclaration(st) || Node.isImportEqualsDeclaration(st) || (this.ctx.moduleKind === 'cjs' && isRequire(st)));
    const lastImport = imports[imports.length - 1];
    if (lastImport) {
      const at = endOfLine(this.ctx.text, lastImport.getEnd());
      this.ctx.edit(at, at, `\n${line}`);
      return;
    }
    const first = statements.find((st) => !(Node.isExpressionStatement(st) && /^['"]use strict['"];?$/.test(st.getText())));
    if (first) {
      const at = first.getStart();
      this.ctx.edit(at, at, `${line}\n${startsLine(this.ctx.text, at) ? '' : '\n'}`);
    } else {
      const at = this.ctx.text.length;
      this.ctx.edit(at, at, `${this.ctx.text.endsWith('\n') || at === 0 ? '' : '\n'}${line}\n`);
    }
  }
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
  for (const raw of findRaw(sf.compilerNode, (n) => ts.isIdentifier(n) && names.has(n.text))) {
    const id = raw as ts.Identifier;
    const parent = id.parent;
    if (isRawPropertyName(id) || ts.isImportSpecifier(parent) || ts.isNamespaceImport(parent) || ts.isBindingElement(parent) || (ts.isVariableDeclaration(parent) && parent.name === id)) continue;
    counts.set(id.text, (counts.get(id.text) ?? 0) + 1);
  }
  return counts;
}

export function isMcpModule(spec: string, mcp: McpResolver): boolean {
  if (spec === CLIENT_HELPER_MODULE || spec.startsWith('@modelcontextprotocol/sdk')) return true;
  return spec.startsWith('.') && mcp.localReexportsAnything(spec);
}

