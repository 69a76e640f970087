import { Node, type SourceFile, type VariableDeclaration } from 'ts-morph';
import { ClientSetup } from './client-setup.js';
import { unusedName } from './codegen.js';
import type { Edit } from './edits.js';
import { ImportPlanner } from './import-planner.js';
import { hasMarker, markerComment, MARKERS, type MarkerCode } from './markers.js';
import { McpResolver } from './mcp-imports.js';
import { bindingNames } from './raw.js';
import type { FileRunOptions, PendingRow } from './file-run-options.js';
import { siteKind } from './site-kinds.js';
import { detectStyle, indentationAt, lineStartOf, startsLine, type CodeStyle } from './text.js';
import type { FileFacts, TransformContext } from './transforms/types.js';

/** One round of one phase: the transforms of the phase over one parse of the file. */
export class PassContext implements TransformContext {
  readonly isTypeScript: boolean;
  readonly moduleKind: 'esm' | 'cjs';
  readonly style: CodeStyle;
  readonly mcp: McpResolver;
  private readonly edits: Edit[] = [];
  private readonly markerKeys = new Set<string>();
  /** Names this pass handed out, with the function they were made for (undefined: the file). */
  private readonly reserved: Array<{ name: string; scope: Node | undefined }> = [];
  private identifiers: Set<string> | undefined;
  private readonly clients = new ClientSetup(this);
  private readonly imports = new ImportPlanner(this);

  constructor(
    readonly sourceFile: SourceFile,
    readonly text: string,
    readonly filePath: string,
    private readonly options: FileRunOptions,
    readonly facts: FileFacts,
    private readonly round: number,
    private readonly pending: PendingRow[],
    private readonly rewrites: Record<string, number>,
    /** Where each row recorded so far points in this round's text. */
    private readonly rowOffsets: () => number[],
  ) {
    this.isTypeScript = /\.[cm]?tsx?$/.test(filePath);
    this.mcp = new McpResolver(sourceFile, filePath, options.reexports);
    this.mcp.receiverKinds = facts.typed?.receivers;
    this.mcp.methodValues = facts.typed?.methods;
    this.style = detectStyle(text);
    const hasImports = sourceFile.getImportDeclarations().length > 0;
    this.moduleKind = hasImports ? 'esm' : /\.c[jt]s$/.test(filePath) || /\brequire\s*\(/.test(text) ? 'cjs' : 'esm';
  }

  /** The transform running now (rows and rewrite counts are credited to it). */
  transform = '';
  /** Some match overlapped an edit of this round: the transform runs once more on the new text. */
  deferred = false;

  isFree(start: number, end: number): boolean {
    const free = this.edits.every((e) => {
      if (e.start === e.end) return e.start <= start || e.start >= end;
      if (start === end) return start <= e.start || start >= e.end;
      return end <= e.start || start >= e.end;
    });
    if (!free) this.deferred = true;
    return free;
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
        // Blank lines on both sides would become two in a row: take the one after with it.
        const before = text.slice(lineStartOf(text, Math.max(0, start - 1)), Math.max(0, start - 1));
        const nextEnd = text.indexOf('\n', end);
        if (start > 0 && /^[ \t]*$/.test(before) && nextEnd !== -1 && /^[ \t]*$/.test(text.slice(end, nextEnd))) end = nextEnd + 1;
      }
    }
    return this.edit(start, end, '');
  }

  marker(node: Node, code: MarkerCode): void {
    const row = { code, transform: this.transform };
    this.pending.push({ round: this.round, offset: node.getStart(), ...row, kind: siteKind(row, node.getText()), message: MARKERS[code].instruction });
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

  rewrote(site: Node): void {
    this.rewrites[this.transform] = (this.rewrites[this.transform] ?? 0) + 1;
    const row = { code: 'rewritten' as const, transform: this.transform };
    this.pending.push({ round: this.round, offset: site.getStart(), ...row, kind: siteKind(row, site.getText()), message: `rewritten by ${this.transform}` });
  }

  isCovered(node: Node, ownCodes: ReadonlySet<MarkerCode>): boolean {
    const anchor = markerAnchor(node);
    const start = anchor.getFullStart();
    const end = anchor.getEnd();
    if (this.rowOffsets().some((offset) => offset >= start && offset < end)) return true;
    const leading = this.text.slice(start, anchor.getStart());
    return (Object.keys(MARKERS) as MarkerCode[]).some((code) => !ownCodes.has(code) && hasMarker(leading, code));
  }

  fresh(base: string, near?: Node, reserve = true): string {
    const scope = near?.getFirstAncestor((a) => Node.isFunctionDeclaration(a) || Node.isFunctionExpression(a) || Node.isArrowFunction(a) || Node.isMethodDeclaration(a) || Node.isConstructorDeclaration(a));
    let taken: Set<string>;
    if (scope) {
      taken = bindingNames(scope.compilerNode);
    } else {
      if (!this.identifiers) this.identifiers = bindingNames(this.sourceFile.compilerNode);
      taken = this.identifiers;
    }
    // A name given out in a function that neither holds nor is held by this one cannot clash:
    // sibling test cases each get `tasksClient`, not `tasksClient2`, `tasksClient3`, ….
    const clashing = this.reserved.filter((r) => !r.scope || !scope || contains(r.scope, scope) || contains(scope, r.scope)).map((r) => r.name);
    const name = unusedName(base, new Set([...taken, ...clashing]));
    if (reserve) this.reserved.push({ name, scope });
    return name;
  }

  tasksClientFor(clientDecl: VariableDeclaration, site: Node): string | undefined {
    return this.clients.forSite(clientDecl, site);
  }

  existingTasksClient(clientDecl: VariableDeclaration): VariableDeclaration | undefined {
    return this.clients.existing(clientDecl);
  }

  importFromHelper(values: string[], types: string[] = []): void {
    this.imports.fromHelper(values, types);
  }

  importSdkType(name: string, module: string): string {
    return this.imports.sdkType(name, module);
  }

  /** The pass's edits, with the imports it asked for. */
  finish(): Edit[] {
    this.imports.emit();
    return this.edits;
  }
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

function contains(outer: Node, inner: Node): boolean {
  return inner.getStart() >= outer.getStart() && inner.getEnd() <= outer.getEnd();
}
