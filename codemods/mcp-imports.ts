import { Node, SyntaxKind, ts, type Expression, type SourceFile } from 'ts-morph';
import { findRaw } from './raw.js';
import { isLocalSpecifier, isSdkSpecifier, type ReexportIndex } from './reexports.js';
import type { ReceiverKind } from './receiver-kind.js';
import { resolveIdentifier } from './scope.js';

/** The package entry of the client helper the codemod migrates to. */
export const CLIENT_HELPER_MODULE = 'mcp-tasks-shim/client';

/** A module as far as the codemod cares: the SDK, a local module (maybe re-exporting it), or the client helper. */
type ModuleRef = { kind: 'sdk' } | { kind: 'local'; spec: string } | { kind: 'helper' };

/** What an expression is: an export of the SDK or the helper, or a namespace object of such a module. */
export type McpValue = { kind: 'sdk-export'; name: string } | { kind: 'helper-export'; name: string } | { kind: 'namespace'; module: ModuleRef };

/**
 * Proves that names come from the official MCP SDK (or from the client helper), through aliased
 * and namespace imports, CommonJS require, dynamic import, and re-exports by local modules.
 */
export class McpResolver {
  private mcpImport: boolean | undefined;
  /** The type checker's kind per receiver text (type-aware runs only); absent entries fall back to the syntax. */
  receiverKinds: ReadonlyMap<string, ReceiverKind> | undefined;
  /** The type checker's legacy method per expression text (type-aware runs only); see typed-methods.ts. */
  methodValues: ReadonlyMap<string, string> | undefined;

  constructor(
    readonly sourceFile: SourceFile,
    readonly filePath: string,
    private readonly reexports: ReexportIndex,
  ) {}

  /** The file imports (or requires) the SDK directly or through a local module that re-exports it. */
  hasMcpImport(): boolean {
    if (this.mcpImport !== undefined) return this.mcpImport;
    const specs = [
      ...this.sourceFile.getImportDeclarations().map((d) => d.getModuleSpecifierValue()),
      ...findRaw(this.sourceFile.compilerNode, (n) => ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require')))
        .map((call) => (call as ts.CallExpression).arguments[0])
        .filter((arg): arg is ts.StringLiteral => arg !== undefined && ts.isStringLiteralLike(arg))
        .map((arg) => arg.text),
    ];
    this.mcpImport = specs.some((spec) => isSdkSpecifier(spec) || (isLocalSpecifier(spec) && this.localReexportsAnything(spec)));
    return this.mcpImport;
  }

  /** A local module that re-exports something of the SDK. */
  localReexportsAnything(spec: string): boolean {
    const r = this.reexports.reexportsOf(this.filePath, spec);
    return r.star || r.names.size > 0;
  }

  private moduleOf(spec: string): ModuleRef | undefined {
    if (isSdkSpecifier(spec)) return { kind: 'sdk' };
    if (spec === CLIENT_HELPER_MODULE) return { kind: 'helper' };
    if (isLocalSpecifier(spec)) return { kind: 'local', spec };
    return undefined;
  }

  private exportOf(module: ModuleRef, name: string): McpValue | undefined {
    if (module.kind === 'sdk') return { kind: 'sdk-export', name };
    if (module.kind === 'helper') return { kind: 'helper-export', name };
    const r = this.reexports.reexportsOf(this.filePath, module.spec);
    const sdkName = r.names.get(name) ?? (r.star ? name : undefined);
    return sdkName ? { kind: 'sdk-export', name: sdkName } : undefined;
  }

  valueOf(node: Node | undefined, depth = 0): McpValue | undefined {
    if (!node || depth > 8) return undefined;
    if (Node.isParenthesizedExpression(node) || Node.isAsExpression(node) || Node.isNonNullExpression(node)) return this.valueOf(node.getExpression(), depth + 1);
    if (Node.isAwaitExpression(node)) return this.valueOf(node.getExpression(), depth + 1);
    if (Node.isCallExpression(node)) {
      const spec = moduleCallSpec(node);
      const module = spec === undefined ? undefined : this.moduleOf(spec);
      return module ? { kind: 'namespace', module } : undefined;
    }
    if (Node.isPropertyAccessExpression(node)) {
      const base = this.valueOf(node.getExpression(), depth + 1);
      return base?.kind === 'namespace' ? this.exportOf(base.module, node.getName()) : undefined;
    }
    if (Node.isQualifiedName(node)) {
      const base = this.valueOf(node.getLeft(), depth + 1);
      return base?.kind === 'namespace' ? this.exportOf(base.module, node.getRight().getText()) : undefined;
    }
    if (!Node.isIdentifier(node)) return undefined;
    const binding = resolveIdentifier(node);
    if (!binding) return undefined;
    if (binding.kind === 'import' || binding.kind === 'namespace-import') {
      const module = this.moduleOf(binding.decl.getModuleSpecifierValue());
      if (!module) return undefined;
      if (binding.kind === 'namespace-import') return { kind: 'namespace', module };
      return binding.imported === 'default' ? undefined : this.exportOf(module, binding.imported);
    }
    if (binding.kind === 'variable') {
      const init = binding.decl.getInitializer();
      if (binding.element) {
        const base = this.valueOf(init, depth + 1);
        if (base?.kind !== 'namespace') return undefined;
        const prop = binding.element.getPropertyNameNode()?.getText() ?? binding.element.getName();
        return this.exportOf(base.module, prop);
      }
      return this.valueOf(init, depth + 1);
    }
    return undefined;
  }

  /** `node` names the SDK export `name` (e.g. Client, ElicitRequestSchema). */
  isSdkExport(node: Node | undefined, name: string): boolean {
    const value = this.valueOf(node);
    return value?.kind === 'sdk-export' && value.name === name;
  }

  isHelperExport(node: Node | undefined, name: string): boolean {
    const value = this.valueOf(node);
    return value?.kind === 'helper-export' && value.name === name;
  }

  /** A type reference (`Client`, `sdk.Client`) to an SDK export. */
  isSdkTypeReference(node: Node | undefined, name: string): boolean {
    if (!node || !Node.isTypeReference(node)) return false;
    return this.isSdkExport(node.getTypeName(), name);
  }

  /** `new X(...)` where X is the SDK's `name`. */
  isNewOf(expr: Expression | undefined, name: string): boolean {
    if (!expr || !Node.isNewExpression(expr)) return false;
    return this.isSdkExport(expr.getExpression(), name);
  }
}

/** `require('m')` or `import('m')` → 'm'. */
export function moduleCallSpec(call: Node): string | undefined {
  if (!Node.isCallExpression(call)) return undefined;
  const callee = call.getExpression();
  const isRequire = Node.isIdentifier(callee) && callee.getText() === 'require';
  const isImport = callee.getKind() === SyntaxKind.ImportKeyword;
  if (!isRequire && !isImport) return undefined;
  const arg = call.getArguments()[0];
  return arg && (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg)) ? arg.getLiteralText() : undefined;
}
