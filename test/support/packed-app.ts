import { execFile } from 'node:child_process';
import { cpSync, lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execute = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The environment for npm and node children: without the `npm_*` variables an enclosing
 * `npm test` sets (prefix, workspace, lifecycle), which would point them back at this repo.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
}

/** Runs a command with a bound on its time and output; rejects with its output when it fails. */
export async function run(cwd: string, command: string, args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execute(command, args, { cwd, env: cleanEnv(), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${String(err)}\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: err });
  }
}

/** What a command printed on stdout; rejects with its output when it fails. */
export async function sh(cwd: string, command: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return (await run(cwd, command, args, timeoutMs)).stdout;
}

export interface PackedTarball {
  path: string;
  /** Paths inside the package, as `npm pack --json` lists them. */
  files: string[];
}

async function pack(cwd: string, dest: string): Promise<PackedTarball> {
  const out = await sh(cwd, 'npm', ['pack', '--json', '--pack-destination', dest], 120_000);
  // npm prints lifecycle output before the JSON when scripts run; the JSON array is the last thing.
  const [info] = JSON.parse(out.slice(out.indexOf('\n[') + 1)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { path: join(dest, info!.filename), files: info!.files.map((f) => f.path) };
}

/** What the root package's `files` and its prepack build read. */
const ROOT_SOURCES = ['package.json', 'README.md', 'tsconfig.json', 'bin', 'src', 'entries', 'codemods', 'docs', 'prometheus', 'scripts'];
const CLIENT_SOURCES = ['package.json', 'README.md', 'tsconfig.build.json', 'src'];

/**
 * Packs packages/client the way `npm publish` would (its prepack builds the JS and the .d.ts),
 * from a copy, so that the repo's own packages/client/dist is never rebuilt under tests that
 * run beside this one. The copy borrows the repo's node_modules for esbuild, tsc and types.
 */
export async function packClient(dir: string): Promise<PackedTarball> {
  const copy = join(dir, 'client-src');
  for (const entry of CLIENT_SOURCES) cpSync(join(ROOT, 'packages/client', entry), join(copy, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return pack(copy, dir);
}

/**
 * Packs the root package as docs/operations.md says (`npm pack`, its prepack build included), from
 * a copy, so that the repo's own dist/ and packages/client/dist are never rebuilt under tests that
 * run beside this one. The copy borrows the repo's node_modules for esbuild, tsc and types.
 */
export async function packRoot(dir: string): Promise<PackedTarball> {
  const copy = join(dir, 'shim-src');
  for (const entry of ROOT_SOURCES) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
  for (const entry of CLIENT_SOURCES) cpSync(join(ROOT, 'packages/client', entry), join(copy, 'packages/client', entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return pack(copy, dir);
}

/**
 * An empty ESM app in `dir` with `specs` installed the way the docs say (`npm install <spec>…`),
 * resolved from the npm cache when it has them and from the registry otherwise, as a user's
 * install is. Returns what npm printed.
 */
export async function installApp(dir: string, specs: string[]): Promise<{ stdout: string; stderr: string }> {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  return run(dir, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...specs], 180_000);
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
