import type { Node, SourceFile, VariableDeclaration } from 'ts-morph';
import type { MarkerCode } from '../markers.js';
import type { McpResolver } from '../mcp-imports.js';
import type { TypedFileFacts } from '../receiver-kind.js';
import type { CodeStyle } from '../text.js';

/** What the codemod learnt about a file before any transform ran. */
export interface FileFacts {
  /** The file imports the SDK (directly, or through a local module that re-exports it). */
  hasMcpImport: boolean;
  /** The file sends tasks/create-dialect requests through a proven SDK Client. */
  usesDialect: boolean;
  /** References per name imported from the SDK, a re-exporting module or the helper, before any rewrite. */
  importRefsBefore: ReadonlyMap<string, number>;
  /** The type checker's receiver kinds and method values (type-aware runs); undefined in syntactic runs. */
  typed: TypedFileFacts | undefined;
}

export interface TransformContext {
  readonly sourceFile: SourceFile;
  /** The full text the current AST was parsed from. */
  readonly text: string;
  readonly filePath: string;
  readonly isTypeScript: boolean;
  readonly moduleKind: 'esm' | 'cjs';
  readonly style: CodeStyle;
  readonly mcp: McpResolver;
  readonly facts: FileFacts;

  /** Replaces [start, end); false (and nothing recorded) when it overlaps an edit already made in this pass. */
  edit(start: number, end: number, text: string): boolean;
  replaceNode(node: Node, text: string): boolean;
  /** Removes a statement with its own line(s) and leading comments. */
  removeStatement(statement: Node): boolean;
  /** True when [start, end) overlaps nothing edited in this pass. */
  isFree(start: number, end: number): boolean;
  /** Leaves one marker comment above the statement holding `node` (once), and a report row. */
  marker(node: Node, code: MarkerCode): void;
  /** Counts one rewrite of the site at `site` (a node of the text before the edit) for the summary and the report. */
  rewrote(site: Node): void;
  /**
   * A transform already rewrote or marked the statement holding `node` (a row of this run lies in
   * it, or a marker comment of a code not in `ownCodes` stands above it).
   */
  isCovered(node: Node, ownCodes: ReadonlySet<MarkerCode>): boolean;
  /**
   * An identifier no code around `near` (its function, else the file) uses yet, and no other call
   * of this pass got. `reserve: false` for names scoped to their own block (a catch parameter).
   */
  fresh(base: string, near?: Node, reserve?: boolean): string;
  /** The `new TasksClient(...)` declaration already in the file for the SDK client declared by `clientDecl`. */
  existingTasksClient(clientDecl: VariableDeclaration): VariableDeclaration | undefined;
  /** The TasksClient variable to use for the SDK client declared by `clientDecl` at `site`, creating it when needed. */
  tasksClientFor(clientDecl: VariableDeclaration, site: Node): string | undefined;
  /** Makes `names` importable from the client helper (`type X` for types, TypeScript only). */
  importFromHelper(values: string[], types?: string[]): void;
  /** Adds `import type { name } from '<module>'` (TypeScript only) unless the name is already bound. */
  importSdkType(name: string, module: string): string;
}

export interface Transform {
  name: string;
  /** One line for `--list`. */
  description: string;
  /** The transform only runs on files containing one of these strings (the cheap prefilter). */
  triggers: readonly string[];
  /**
   * Transforms of one phase run on the same parse of the file (their edits must not overlap; a
   * match that overlaps is retried on the next parse). A later phase sees the earlier phases' output:
   * 1 rewrites calls, 2 moves handlers into the TasksClient, 3 renames fields and statuses of the
   * rewritten values, 4 marks the old-API sites nothing rewrote or marked, 9 finishes (markers and imports).
   */
  phase: 1 | 2 | 3 | 4 | 9;
  run(ctx: TransformContext): void;
}
