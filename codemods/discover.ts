import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

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
  symlinksSkipped: number;
}

/**
 * Every source file under `root` (or `root` itself), sorted, without following symlinks:
 * a symlinked file or directory is counted and skipped.
 */
export function discoverFiles(root: string): Discovery {
  const found: Discovery = { files: [], symlinksSkipped: 0 };
  const stat = lstatSync(root);
  if (stat.isSymbolicLink()) {
    found.symlinksSkipped++;
    return found;
  }
  if (stat.isFile()) {
    if (isSourceFile(root)) found.files.push(root);
    return found;
  }
  walk(root, found);
  found.files.sort();
  return found;
}

function walk(dir: string, found: Discovery): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: nothing to migrate there
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      found.symlinksSkipped++;
    } else if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) walk(path, found);
    } else if (entry.isFile() && isSourceFile(entry.name)) {
      found.files.push(path);
    }
  }
}
