import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, run, sh } from '../support/packed-app.js';

/** What `npm ci` reads: the manifests and the lockfile of the checkout. */
const INSTALL_INPUTS = ['package.json', 'package-lock.json', 'packages/client/package.json'];

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };

let dir: string;
let install: { stdout: string; stderr: string };

// A fresh `npm ci` of this checkout's manifests, in a copy: the repo's own node_modules serves the tests beside this one.
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mts-npm-ci-'));
  mkdirSync(join(dir, 'packages/client'), { recursive: true });
  for (const file of INSTALL_INPUTS) cpSync(join(ROOT, file), join(dir, file));
  install = await run(dir, 'npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], 240_000);
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('install scripts (docs/decisions/0051-install-scripts.md)', () => {
  it('are all reviewed in package.json: none runs, and esbuild is denied by name', () => {
    expect(manifest.allowScripts).toEqual({ esbuild: false });
  });

  // A dependency added later with an install script nobody reviewed fails here (and npm ci prints it).
  it('a fresh npm ci prints no install-script notice and lists nothing left to review', async () => {
    expect(install.stderr).not.toMatch(/install-scripts|allowScripts/);
    const pending = JSON.parse(await sh(dir, 'npm', ['install-scripts', 'ls', '--json'])) as { allowScripts: unknown[] };
    expect(pending.allowScripts).toEqual([]);
  });

  it('esbuild works without its postinstall: the CLI and the JavaScript API the builds and the bundle tests use', async () => {
    const { version } = JSON.parse(readFileSync(join(dir, 'node_modules/esbuild/package.json'), 'utf8')) as { version: string };
    // The postinstall would have replaced this Node launcher with the native binary.
    expect(readFileSync(join(dir, 'node_modules/esbuild/bin/esbuild'), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
    expect(await sh(dir, join(dir, 'node_modules/.bin/esbuild'), ['--version'])).toBe(`${version}\n`);
    const source = "import { transformSync } from 'esbuild'; console.log(transformSync('let a: number = 1', { loader: 'ts' }).code);";
    expect(await sh(dir, process.execPath, ['--input-type=module', '-e', source])).toBe('let a = 1;\n\n');
  });
});
