import { execFile } from 'node:child_process';
import { cpSync, lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The environment for npm and node children: without the `npm_*` variables an enclosing
 * `npm test` sets (prefix, workspace, lifecycle), which would point them back at this repo.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
}

/** Runs a command with a bound on its time and output; rejects with its stderr when it fails. */
export async function sh(cwd: string, command: string, args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd, env: cleanEnv(), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${String(err)}\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: err });
  }
}

export interface PackedTarball {
  path: string;
  /** Paths inside the package, as `npm pack --json` lists them. */
  files: string[];
}

async function pack(cwd: string, dest: string, extra: string[]): Promise<PackedTarball> {
  const out = await sh(cwd, 'npm', ['pack', '--json', '--pack-destination', dest, ...extra], 120_000);
  // npm prints lifecycle output before the JSON when scripts run; the JSON array is the last thing.
  const [info] = JSON.parse(out.slice(out.indexOf('\n[') + 1)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { path: join(dest, info!.filename), files: info!.files.map((f) => f.path) };
}

/**
 * Packs packages/client the way `npm publish` would (its prepack builds the JS and the .d.ts),
 * from a copy, so that the repo's own packages/client/dist is never rebuilt under tests that
 * run beside this one. The copy borrows the repo's node_modules for esbuild, tsc and types.
 */
export async function packClient(dir: string): Promise<PackedTarball> {
  const copy = join(dir, 'client-src');
  for (const entry of ['package.json', 'README.md', 'tsconfig.build.json', 'src']) {
    cpSync(join(ROOT, 'packages/client', entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return pack(copy, dir, []);
}

/** Packs the root package as it is (its prepack would rebuild dist/, which other tests run from). */
export function packRoot(dir: string): Promise<PackedTarball> {
  return pack(ROOT, dir, ['--ignore-scripts']);
}

/** An empty ESM app in `dir` with `specs` installed from the npm cache only. */
export async function installApp(dir: string, specs: string[]): Promise<void> {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await sh(dir, 'npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], 120_000);
}

type LockPackages = Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>;

/** Where Node finds `name` from the package installed at `from` (a lockfile path such as `node_modules/a/node_modules/b`). */
function resolveIn(packages: LockPackages, from: string, name: string): string | undefined {
  const parts = from.split('/node_modules/');
  for (let depth = parts.length; depth >= 1; depth--) {
    const candidate = `${parts.slice(0, depth).join('/node_modules/')}/node_modules/${name}`;
    if (candidate in packages) return candidate;
  }
  const top = `node_modules/${name}`;
  return top in packages ? top : undefined;
}

/** Bytes of the files of a package directory, not counting the packages nested in its node_modules. */
function ownBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' && entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? ownBytes(path) : lstatSync(path).size;
  }
  return total;
}

/**
 * The packages of an installed app that are neither `root` nor reachable from it through
 * dependencies (regular, optional, or peer where installed), with their sizes: what installing
 * something besides `root` costs the app.
 */
export function packagesBesides(appDir: string, root: string): Array<{ path: string; bytes: number }> {
  const lock = JSON.parse(readFileSync(join(appDir, 'node_modules/.package-lock.json'), 'utf8')) as { packages: LockPackages };
  const reached = new Set<string>();
  const pending = [`node_modules/${root}`];
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (reached.has(path) || !(path in lock.packages)) continue;
    reached.add(path);
    const meta = lock.packages[path]!;
    for (const name of Object.keys({ ...meta.dependencies, ...meta.optionalDependencies, ...meta.peerDependencies })) {
      const found = resolveIn(lock.packages, path, name);
      if (found) pending.push(found);
    }
  }
  return Object.keys(lock.packages)
    .filter((path) => path !== '' && !reached.has(path))
    .map((path) => ({ path, bytes: ownBytes(join(appDir, path)) }));
}
