import { existsSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { Project, ts } from 'ts-morph';
import { classifyReceivers } from './receiver-types.js';
import type { TypedFileFacts } from './receiver-kind.js';
import { typedMethodValues } from './typed-methods.js';
import { syntaxErrors } from './session.js';

/** A tsconfig.json as the codemod uses it: compiler options, or why they could not be read. */
export type TsConfig = { path: string; options: ts.CompilerOptions; error?: undefined } | { path: string; error: string; options?: undefined };

/** "No inputs were found": harmless here, the codemod hands the program its own files. */
const NO_INPUTS = 18003;

/**
 * The tsconfig.json that governs each file: the nearest one in the file's directory or above,
 * up to the directory holding `.git` (each package of a monorepo gets its own). Read once each.
 */
export class TsConfigs {
  private readonly nearestByDir = new Map<string, string | undefined>();
  private readonly loaded = new Map<string, TsConfig>();

  nearest(file: string): string | undefined {
    return this.nearestIn(dirname(file));
  }

  private nearestIn(dir: string): string | undefined {
    if (this.nearestByDir.has(dir)) return this.nearestByDir.get(dir);
    const candidate = join(dir, 'tsconfig.json');
    let found: string | undefined;
    if (existsSync(candidate)) found = candidate;
    else if (!existsSync(join(dir, '.git')) && dir !== parse(dir).root) found = this.nearestIn(dirname(dir));
    this.nearestByDir.set(dir, found);
    return found;
  }

  load(path: string): TsConfig {
    const cached = this.loaded.get(path);
    if (cached) return cached;
    const config = readTsConfig(path);
    this.loaded.set(path, config);
    return config;
  }
}

function readTsConfig(path: string): TsConfig {
  const read = ts.readConfigFile(path, ts.sys.readFile);
  if (read.error) return { path, error: ts.flattenDiagnosticMessageText(read.error.messageText, ' ') };
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(path), undefined, path);
  const fatal = parsed.errors.find((d) => d.code !== NO_INPUTS);
  if (fatal) return { path, error: ts.flattenDiagnosticMessageText(fatal.messageText, ' ') };
  return { path, options: parsed.options };
}

/**
 * The type checker's receiver kinds and method values for each file of one chunk: one program per
 * chunk over the files and what they import (the SDK's declarations), so memory stays flat
 * whatever the repo size.
 */
export function typedFacts(files: ReadonlyArray<{ path: string; raw: string }>, options: ts.CompilerOptions): Map<string, TypedFileFacts> {
  const project = new Project({
    compilerOptions: { ...options, noEmit: true, allowJs: true, checkJs: false, skipLibCheck: true, types: [], declaration: false, composite: false, incremental: false },
    skipAddingFilesFromTsConfig: true,
  });
  const byFile = new Map<string, TypedFileFacts>();
  const sources = files.map(({ path, raw }) => project.createSourceFile(path, raw, { overwrite: true }));
  const checker = project.getTypeChecker();
  for (const sf of sources) {
    if (syntaxErrors(sf).length > 0) continue;
    byFile.set(sf.getFilePath(), { receivers: classifyReceivers(sf, checker), methods: typedMethodValues(sf, checker) });
  }
  return byFile;
}
