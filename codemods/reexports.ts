import { lstatSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ts } from 'ts-morph';

/** The official SDK's package (every entry point below it). */
export function isSdkSpecifier(spec: string): boolean {
  return spec === '@modelcontextprotocol/sdk' || spec.startsWith('@modelcontextprotocol/sdk/');
}

export function isLocalSpecifier(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../');
}

/** What a local module re-exports from the SDK: exported name → SDK export name. */
export interface SdkReexports {
  names: Map<string, string>;
  /** `export * from '<sdk>'` (directly or through another local module). */
  star: boolean;
}

const EMPTY: SdkReexports = { names: new Map(), star: false };

/**
 * Follows local modules that re-export the SDK (`export { Client } from '@modelcontextprotocol/sdk/…'`,
 * `import … ; export { … }`, `export *`, and CommonJS `module.exports = require(…)` shapes).
 * Reads files straight from disk with the bare TypeScript parser, caches per run, never follows
 * symlinks, and stops at cycles.
 */
export class ReexportIndex {
  private readonly cache = new Map<string, SdkReexports>();

  /** An absolute path for a relative specifier, trying the TypeScript/Node extension rules. */
  resolveSpecifier(fromFile: string, spec: string): string | undefined {
    const base = resolve(dirname(fromFile), spec);
    const candidates: string[] = [];
    const swap: Record<string, string[]> = { '.js': ['.ts', '.tsx', '.js', '.jsx'], '.mjs': ['.mts', '.mjs'], '.cjs': ['.cts', '.cjs'], '.jsx': ['.tsx', '.jsx'] };
    const ext = Object.keys(swap).find((e) => base.endsWith(e));
    if (ext) candidates.push(...swap[ext]!.map((e) => base.slice(0, -ext.length) + e));
    if (/\.[cm]?tsx?$/.test(base)) candidates.push(base);
    for (const e of ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']) candidates.push(base + e);
    for (const e of ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs']) candidates.push(resolve(base, `index${e}`));
    for (const candidate of candidates) {
      try {
        const stat = lstatSync(candidate);
        if (stat.isFile()) return candidate;
      } catch {
        // try the next one
      }
    }
    return undefined;
  }

  /** SDK names re-exported by the local module `spec` as seen from `fromFile`. */
  reexportsOf(fromFile: string, spec: string): SdkReexports {
    const path = this.resolveSpecifier(fromFile, spec);
    return path ? this.exportsOf(path) : EMPTY;
  }

  exportsOf(path: string): SdkReexports {
    const cached = this.cache.get(path);
    if (cached) return cached;
    const result: SdkReexports = { names: new Map(), star: false };
    this.cache.set(path, result); // a cycle sees what is known so far
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return result;
    }
    if (!text.includes('@modelcontextprotocol/sdk') && !/\bexport\b[^;]*\bfrom\s*['"]\.\.?\//.test(text) && !/require\(\s*['"]\.\.?\//.test(text)) return result;
    const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, scriptKindOf(path));
    this.collect(path, sf, result);
    return result;
  }

  private collect(path: string, sf: ts.SourceFile, out: SdkReexports): void {
    // Local bindings that name an SDK export: import { A as B } / const { A: B } = require(…) / const B = require(…).A
    const locals = new Map<string, string>();
    const lookup = (spec: string, name: string): string | undefined => {
      if (isSdkSpecifier(spec)) return name;
      if (!isLocalSpecifier(spec)) return undefined;
      const sub = this.reexportsOf(path, spec);
      return sub.names.get(name) ?? (sub.star ? name : undefined);
    };
    const requireSpec = (expr: ts.Expression | undefined): string | undefined => {
      if (expr && ts.isCallExpression(expr) && ts.isIdentifier(expr.expression) && expr.expression.text === 'require') {
        const arg = expr.arguments[0];
        if (arg && ts.isStringLiteralLike(arg)) return arg.text;
      }
      return undefined;
    };
    const valueOf = (expr: ts.Expression): string | undefined => {
      if (ts.isIdentifier(expr)) return locals.get(expr.text);
      if (ts.isPropertyAccessExpression(expr)) {
        const spec = requireSpec(expr.expression);
        if (spec) return lookup(spec, expr.name.text);
      }
      return undefined;
    };
    const exportObject = (obj: ts.ObjectLiteralExpression): void => {
      for (const prop of obj.properties) {
        if (ts.isShorthandPropertyAssignment(prop)) {
          const v = locals.get(prop.name.text);
          if (v) out.names.set(prop.name.text, v);
        } else if (ts.isPropertyAssignment(prop) && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name))) {
          const v = valueOf(prop.initializer);
          if (v) out.names.set(prop.name.text, v);
        }
      }
    };
    const isModuleExports = (e: ts.Expression): boolean =>
      ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'module' && e.name.text === 'exports';

    for (const st of sf.statements) {
      if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
        const spec = st.moduleSpecifier.text;
        const bindings = st.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) {
          for (const el of bindings.elements) {
            const v = lookup(spec, (el.propertyName ?? el.name).text);
            if (v) locals.set(el.name.text, v);
          }
        }
      } else if (ts.isVariableStatement(st)) {
        for (const decl of st.declarationList.declarations) {
          const spec = requireSpec(decl.initializer);
          if (spec && ts.isObjectBindingPattern(decl.name)) {
            for (const el of decl.name.elements) {
              if (!ts.isIdentifier(el.name)) continue;
              const imported = el.propertyName && ts.isIdentifier(el.propertyName) ? el.propertyName.text : el.name.text;
              const v = lookup(spec, imported);
              if (v) locals.set(el.name.text, v);
            }
          } else if (ts.isIdentifier(decl.name) && decl.initializer) {
            const v = valueOf(decl.initializer);
            if (v) locals.set(decl.name.text, v);
          }
        }
      }
    }
    for (const st of sf.statements) {
      if (ts.isExportDeclaration(st)) {
        const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : undefined;
        if (!st.exportClause) {
          if (spec && isSdkSpecifier(spec)) out.star = true;
          else if (spec && isLocalSpecifier(spec)) {
            const sub = this.reexportsOf(path, spec);
            for (const [k, v] of sub.names) out.names.set(k, v);
            if (sub.star) out.star = true;
          }
        } else if (ts.isNamedExports(st.exportClause)) {
          for (const el of st.exportClause.elements) {
            const imported = (el.propertyName ?? el.name).text;
            const v = spec ? lookup(spec, imported) : locals.get(imported);
            if (v) out.names.set(el.name.text, v);
          }
        }
      } else if (ts.isExpressionStatement(st) && ts.isBinaryExpression(st.expression) && st.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
        const { left, right } = st.expression;
        if (isModuleExports(left)) {
          const spec = requireSpec(right);
          if (spec && isSdkSpecifier(spec)) out.star = true;
          else if (spec && isLocalSpecifier(spec)) {
            const sub = this.reexportsOf(path, spec);
            for (const [k, v] of sub.names) out.names.set(k, v);
            if (sub.star) out.star = true;
          } else if (ts.isObjectLiteralExpression(right)) exportObject(right);
        } else if (ts.isPropertyAccessExpression(left) && ((ts.isIdentifier(left.expression) && left.expression.text === 'exports') || isModuleExports(left.expression))) {
          const v = valueOf(right);
          if (v) out.names.set(left.name.text, v);
        }
      }
    }
  }
}

export function scriptKindOf(path: string): ts.ScriptKind {
  if (path.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (path.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.[cm]?ts$/.test(path)) return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}
