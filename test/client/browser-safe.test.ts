import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/packed-app.js';

// The package's main entry promises browsers: no Node global (Buffer, process) and no node: module anywhere it reaches.
describe('@mcp-tasks-shim/client main entry', () => {
  it('type-checks with the DOM library and no Node types, so it uses nothing of Node', () => {
    const entry = join(ROOT, 'packages/client/src/index.ts');
    const program = ts.createProgram([entry], {
      noEmit: true,
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const own = program.getSourceFiles().filter((file) => file.fileName.startsWith(join(ROOT, 'packages/client/src')));
    expect(own.map((file) => file.fileName)).not.toContain(join(ROOT, 'packages/client/src/file-task-id-store.ts'));
    const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(problems).toEqual([]);
  }, 60_000); // a TypeScript program over the package: seconds on a busy machine
});
