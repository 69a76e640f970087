import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/packed-app.js';

const PAIRS = [
  { entry: 'client', source: 'packages/client/src/index.ts' },
  { entry: 'client-node', source: 'packages/client/src/node.ts' },
];

/** The exported names of each file as TypeScript sees them: all of them, and those that exist at run time. */
function exportsOf(files: string[]): Map<string, { all: string[]; values: string[] }> {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowJs: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    paths: {
      '#client': [join(ROOT, 'packages/client/src/index.ts')],
      '#client/node': [join(ROOT, 'packages/client/src/node.ts')],
    },
  });
  const checker = program.getTypeChecker();
  return new Map(
    files.map((file) => {
      const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!);
      const isValue = (s: ts.Symbol): boolean => {
        const typeOnly = s.declarations?.some((d) => ts.isTypeOnlyImportOrExportDeclaration(d)) ?? false;
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
        return !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0;
      };
      return [file, { all: exported.map((s) => s.name).sort(), values: exported.filter(isValue).map((s) => s.name).sort() }];
    }),
  );
}

// entries/ lists the package's exports by name (no export *), so a new export must be added there too.
describe('mcp-tasks-shim/client entries', () => {
  it('re-export every name of the client package, in the JavaScript and in the declarations', () => {
    const files = PAIRS.flatMap(({ entry, source }) => [join(ROOT, 'entries', `${entry}.js`), join(ROOT, 'entries', `${entry}.d.ts`), join(ROOT, source)]);
    const names = exportsOf(files);
    for (const { entry, source } of PAIRS) {
      const { all, values } = names.get(join(ROOT, source))!;
      expect(values.length).toBeGreaterThan(0);
      expect(names.get(join(ROOT, 'entries', `${entry}.d.ts`))!.all).toEqual(all);
      expect(names.get(join(ROOT, 'entries', `${entry}.js`))!.all).toEqual(values);
    }
  }, 60_000); // a TypeScript program over the package: seconds on a busy machine
});
