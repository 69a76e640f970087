/**
 * `npm run build`: compiles src/ and codemods/ to dist/, which `bin/mcp-tasks-shim.js` runs.
 *
 * esbuild, file by file and unbundled, is the transform tsx applied when the CLI ran the sources
 * directly, minus what a loader needs and a built file does not (`keepNames` wrappers run each
 * time a closure is made). It takes well under a second, so `npm start`, `npm test` and
 * `npm run bench` build first every time and never run a stale dist/. Type errors are
 * `npm run typecheck`'s job. The files a module reads beside itself (Lua scripts, the dashboard's
 * page) are copied as they are.
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist');
const SOURCES = ['src', 'codemods'];
const COPIED = new Set(['.lua', '.html', '.css', '.js']);

const modules: string[] = [];
const assets: string[] = [];
for (const top of SOURCES) walk(join(ROOT, top));

rmSync(OUT, { recursive: true, force: true });
buildSync({
  entryPoints: modules,
  outdir: OUT,
  outbase: ROOT,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  tsconfig: join(ROOT, 'tsconfig.json'),
  logLevel: 'warning',
});
for (const file of assets) {
  const out = join(OUT, relative(ROOT, file));
  mkdirSync(dirname(out), { recursive: true });
  copyFileSync(file, out);
}
console.log(`built ${modules.length} modules and ${assets.length} assets into ${relative(process.cwd(), OUT) || '.'}`);

function walk(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith('.test.ts')) continue;
    else if (entry.name.endsWith('.ts')) modules.push(path);
    else if (COPIED.has(extname(entry.name))) assets.push(path);
  }
}
