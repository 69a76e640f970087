import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { statSync } from 'node:fs';

export type GitState = { repo: false } | { repo: true; dirty: string[] };

/**
 * Whether `path` is inside a git work tree and, if so, which files under it have uncommitted
 * changes (staged, unstaged or untracked). No git on PATH counts as "not a repo".
 */
export function gitState(path: string): GitState {
  const dir = statSync(path).isDirectory() ? path : dirname(path);
  const inside = spawnSync('git', ['-C', dir, 'rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' });
  if (inside.error || inside.status !== 0 || inside.stdout.trim() !== 'true') return { repo: false };
  const status = spawnSync('git', ['-C', dir, 'status', '--porcelain', '--', path], { encoding: 'utf8' });
  if (status.error || status.status !== 0) return { repo: false };
  const dirty = status.stdout.split('\n').filter((line) => line.trim() !== '');
  return { repo: true, dirty };
}
