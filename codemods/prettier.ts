import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';

/**
 * What happened to the changed files and Prettier, for the summary. `failed`: Prettier ran and
 * refused (a config it rejects, a file it cannot format); the rewritten files stay as the codemod
 * wrote them (docs/decisions/0029-prettier-failure-keeps-rewrites.md).
 */
export type PrettierOutcome = { kind: 'ran'; files: number } | { kind: 'not-run'; reason: string } | { kind: 'failed'; message: string };

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
  if (files.length === 0) return { kind: 'not-run', reason: 'no file changed' };
  const home = prettierHome(root);
  if (!home) return { kind: 'not-run', reason: 'no Prettier config with Prettier installed' };
  // Plain text for the report: Prettier colours its messages when it thinks a terminal or CI reads them.
  const result = spawnSync(home.bin, ['--write', '--log-level', 'warn', '--no-color', ...files], {
    cwd: home.dir,
    encoding: 'utf8',
    timeout: PRETTIER_TIMEOUT_MS,
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  if (result.error) return { kind: 'failed', message: result.error.message };
  if (result.status !== 0) return { kind: 'failed', message: `exit ${result.status ?? result.signal}: ${firstError(result.stderr)}` };
  return { kind: 'ran', files: files.length };
}

/** A repo's Prettier that hangs must not hold the run forever. */
const PRETTIER_TIMEOUT_MS = 120_000;

/** Prettier's first error lines (without its `[error]` prefixes): what it rejected, and where. */
function firstError(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^\[error\]\s?/, '').trim())
    .filter((l) => l !== '');
  return lines.slice(0, 2).join(' ') || 'no message';
}

/** The summary's `prettier:` line. */
export function describePrettier(outcome: PrettierOutcome): string {
  if (outcome.kind === 'ran') return `ran on ${outcome.files} changed file${outcome.files === 1 ? '' : 's'}`;
  if (outcome.kind === 'not-run') return `not run: ${outcome.reason}`;
  return `failed (${outcome.message}): the rewritten files are written, not formatted by Prettier`;
}
