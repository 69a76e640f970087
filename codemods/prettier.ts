import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';

/** What happened to the changed files and Prettier, for the summary. */
export type PrettierOutcome = { ran: true; files: number } | { ran: false; reason: string };

const CONFIG_FILES = [
  '.prettierrc',
  '.prettierrc.json',
  '.prettierrc.json5',
  '.prettierrc.yaml',
  '.prettierrc.yml',
  '.prettierrc.toml',
  '.prettierrc.js',
  '.prettierrc.cjs',
  '.prettierrc.mjs',
  '.prettierrc.ts',
  'prettier.config.js',
  'prettier.config.cjs',
  'prettier.config.mjs',
  'prettier.config.ts',
];

/** The nearest directory at or above `from` (up to the one holding `.git`) with a Prettier config and Prettier installed. */
function prettierHome(from: string): { dir: string; bin: string } | undefined {
  let configured: string | undefined;
  for (let dir = from; ; dir = dirname(dir)) {
    if (!configured && (CONFIG_FILES.some((f) => existsSync(join(dir, f))) || hasPackageKey(join(dir, 'package.json')))) configured = dir;
    const bin = join(dir, 'node_modules', '.bin', 'prettier');
    if (configured && existsSync(bin)) return { dir: configured, bin };
    if (existsSync(join(dir, '.git')) || dir === parse(dir).root) return undefined;
  }
}

function hasPackageKey(path: string): boolean {
  try {
    return existsSync(path) && (JSON.parse(readFileSync(path, 'utf8')) as { prettier?: unknown }).prettier !== undefined;
  } catch {
    return false;
  }
}

/**
 * Formats the files the codemod wrote with the repo's own Prettier, when the repo has a Prettier
 * config and Prettier installed; otherwise says why not.
 */
export function runPrettier(root: string, files: readonly string[]): PrettierOutcome {
  if (files.length === 0) return { ran: false, reason: 'no file changed' };
  const home = prettierHome(root);
  if (!home) return { ran: false, reason: 'no Prettier config with Prettier installed' };
  const result = spawnSync(home.bin, ['--write', '--log-level', 'warn', ...files], { cwd: home.dir, encoding: 'utf8' });
  if (result.status !== 0) return { ran: false, reason: `prettier failed: ${(result.stderr || result.error?.message || '').trim().split('\n')[0]}` };
  return { ran: true, files: files.length };
}
