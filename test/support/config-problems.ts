import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';

/** What loadConfig refuses in these arguments and environment; empty when it accepts them. */
export function configProblems(argv: string[], env: Record<string, string> = {}): string[] {
  try {
    loadConfig({ argv, env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

/** Writes `content` to `name` in `dir` and returns its path. */
export function writeIn(dir: string, name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
