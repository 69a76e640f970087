import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, dirname } from 'node:path';

/** The extensions the codemod reads; declaration files are skipped. */
export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'] as const;

/** Dependencies, VCS data and build output: never read. */
export const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'build', 'out', '.git', '.hg', '.svn', 'coverage', '.next', '.nuxt', '.turbo', '.cache']);

export function isSourceFile(name: string): boolean {
  if (/\.d\.[cm]?ts$/.test(name)) return false;
  return SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext));
}

export interface Discovery {
  files: string[];
  /** Symlinks met on the way (never followed); `outside`: the target is not under the root. */
  symlinks: Array<{ path: string; outside: boolean }>;
}

/**
 * Every source file under `root` (or `root` itself), sorted, without following symlinks:
 * a symlinked file or directory is counted and skipped.
 */
export function discoverFiles(root: string): Discovery {
  const found: Discovery = { files: [], symlinks: [] };
  const stat = lstatSync(root);
  if (stat.isSymbolicLink()) {
    found.symlinks.push({ path: root, outside: true });
    return found;
  }
  if (stat.isFile()) {
    if (isSourceFile(root)) found.files.push(root);
    return found;
  }
  walk(root, root, found);
  found.files.sort();
  return found;
}

function walk(root: string, dir: string, found: Discovery): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: nothing to migrate there
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
      found.symlinks.push({ path, outside: pointsOutside(root, path) });
    } else if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) walk(root, path, found);
    } else if (entry.isFile() && isSourceFile(entry.name)) {
      found.files.push(path);
    }
  }
}

function pointsOutside(root: string, link: string): boolean {
  let target: string;
  try {
    target = resolve(dirname(link), readlinkSync(link));
  } catch {
    return true;
  }
  const rel = relative(root, target);
  return rel.startsWith('..') || isAbsolute(rel);
}
