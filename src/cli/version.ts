import { existsSync, readFileSync } from 'node:fs';

/**
 * The installed package's version, from its package.json: two levels above this module in the
 * sources (src/cli/) and three in the build (dist/src/cli/), in a checkout and in an install alike.
 */
export function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    const file = new URL(up, import.meta.url);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'mcp-tasks-shim' && pkg.version) return pkg.version;
  }
  return 'unknown';
}
