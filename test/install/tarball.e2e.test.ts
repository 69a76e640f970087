import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';
import { LegacySession } from '../support/legacy-client.js';
import { cleanEnv, installApp, packRoot, ROOT, run, sh } from '../support/packed-app.js';
import { startShimProcess, type ShimProcess } from '../support/shim-process.js';

/**
 * docs/operations.md, "Installing", word for word: `npm pack` in the checkout, then
 * `npm install ./mcp-tasks-shim-<version>.tgz` into an empty app with nothing else, then the
 * commands the page shows, run from that app.
 */
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** Where the installed package carries the client helper (`#client` in its package.json). */
const CLIENT_DIST = 'node_modules/mcp-tasks-shim/packages/client/dist';

let dir: string;
let app: string;
let globalPrefix: string;
let tarball: string;
let install: { stdout: string; stderr: string };
let upstream: DemoUpstreamProcess;
let shim: ShimProcess;

// Packing (its prepack builds dist/ and the client's declarations) and two installs from the registry or the npm cache: bounded.
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mts-tarball-'));
  app = join(dir, 'app');
  globalPrefix = join(dir, 'global');
  mkdirSync(app);
  const [packed] = await Promise.all([packRoot(dir), spawnDemoUpstream(['--port', '0']).then((u) => (upstream = u))]);
  tarball = basename(packed.path);
  copyFileSync(packed.path, join(app, tarball));
  [install] = await Promise.all([
    installApp(app, [`./${tarball}`]),
    run(app, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '-g', '--prefix', globalPrefix, `./${tarball}`], 180_000),
  ]);
  writeFileSync(join(app, 'policy.json'), JSON.stringify({ tools: DEMO_TOOL_POLICIES }));
  shim = await startShimProcess({
    upstreamUrl: upstream.url,
    // The policy file by the name the docs give it, in the app's directory.
    policyFile: 'policy.json',
    cli: { command: 'npx', args: ['mcp-tasks-shim'], cwd: app, env: cleanEnv() },
  });
}, 300_000);

afterAll(async () => {
  await shim?.stop();
  upstream?.killGroup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs an ES module in plain Node inside the app and returns what it printed as JSON. */
async function nodeInApp(source: string): Promise<unknown> {
  return JSON.parse(await sh(app, process.execPath, ['--input-type=module', '-e', source], 30_000));
}

describe('the packed mcp-tasks-shim, installed alone into an empty app', () => {
  it('is named as the docs name it, carries the client helper and the alerting rules, and installs with nothing else and no install-script notice', () => {
    expect(tarball).toBe(`mcp-tasks-shim-${version}.tgz`);
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies).toEqual({ 'mcp-tasks-shim': `file:${tarball}` });
    for (const file of ['index.js', 'index.d.ts', 'node.js', 'node.d.ts']) expect(existsSync(join(app, CLIENT_DIST, file))).toBe(true);
    // The alerting rules docs/operations.md ("Alerts") tells operators to load from the install.
    expect(existsSync(join(app, 'node_modules/mcp-tasks-shim/prometheus/mcp-tasks-shim.rules.yml'))).toBe(true);
    expect(install.stderr).not.toMatch(/install-scripts|E404|npm error/);
  });

  it('npx mcp-tasks-shim --version prints the packed version, and so does the global install', async () => {
    expect(await sh(app, 'npx', ['mcp-tasks-shim', '--version'], 30_000)).toBe(`${version}\n`);
    expect(await sh(dir, join(globalPrefix, 'bin/mcp-tasks-shim'), ['--version'], 30_000)).toBe(`${version}\n`);
  });

  it('npx mcp-tasks-shim serve fronts an upstream and answers calls on the old and the new wire', async () => {
    const legacy = await LegacySession.open(shim.url, { clientInfo: { name: 'tarball-legacy', version: '1.0.0' } });
    const greeting = await legacy.result('tools/call', { name: 'greet', arguments: { name: 'Legacy' } });
    expect(greeting.content).toEqual([{ type: 'text', text: 'Hello, Legacy!' }]);
    // The new wire, from the app, through the helper the package exports.
    const printed = (await nodeInApp(`
      import { TasksClient } from 'mcp-tasks-shim/client';
      const tasks = new TasksClient({ url: ${JSON.stringify(shim.url)} });
      const greeting = await tasks.callTool('greet', { name: 'Tarball' });
      // Two seconds outlast the one-second window of an auto tool: a task.
      const started = await tasks.startTool('slow_compute', { seconds: 2 });
      const done = started.kind === 'task' ? await tasks.waitForTask(started.task.taskId) : started.result;
      console.log(JSON.stringify({ text: greeting.content[0].text, kind: started.kind, done: done.content[0].text }));
    `)) as { text: string; kind: string; done: string };
    expect(printed).toEqual({ text: 'Hello, Tarball!', kind: 'task', done: 'Computed result after 2s' });
  });

  it("import { TasksClient } from 'mcp-tasks-shim/client' in plain Node gives the carried client helper's own values", async () => {
    const entry = join(app, CLIENT_DIST, 'index.js');
    const nodeEntry = join(app, CLIENT_DIST, 'node.js');
    const printed = (await nodeInApp(`
      const shimEntry = await import('mcp-tasks-shim/client');
      const pkg = await import(${JSON.stringify(entry)});
      const shimNode = await import('mcp-tasks-shim/client/node');
      const pkgNode = await import(${JSON.stringify(nodeEntry)});
      const same = (a, b) => Object.keys(a).length === Object.keys(b).length && Object.keys(b).every((k) => a[k] === b[k]);
      console.log(JSON.stringify({ names: Object.keys(shimEntry), same: same(shimEntry, pkg), sameNode: same(shimNode, pkgNode) }));
    `)) as { names: string[]; same: boolean; sameNode: boolean };
    expect(printed).toMatchObject({ same: true, sameNode: true });
    expect(printed.names).toEqual(expect.arrayContaining(['TasksClient', 'tasksClientFor']));
  });

  it('bundles mcp-tasks-shim/client for the browser with no node: import, and the bundle talks to the shim with browser globals only', async () => {
    const bundled = await build({
      stdin: { contents: "export { TasksClient } from 'mcp-tasks-shim/client';", resolveDir: app, loader: 'js' },
      absWorkingDir: app,
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'tasksHelper',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(bundled.errors).toEqual([]);
    const inputs = Object.keys(bundled.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:') || input.includes('file-task-id-store'))).toEqual([]);
    expect(inputs.some((input) => input.includes(`${CLIENT_DIST}/tasks-client.js`))).toBe(true);

    // What a browser page has, and nothing of Node's (no process, Buffer, require).
    const browserGlobals = { fetch, Headers, Request, Response, URL, AbortController, AbortSignal, DOMException, TextEncoder, TextDecoder, ReadableStream, btoa, atob, setTimeout, clearTimeout, crypto, console };
    const page = createContext({ ...browserGlobals });
    runInContext(bundled.outputFiles[0]!.text, page);
    const outcome = await runInContext(
      `(async () => {
        const tasks = new tasksHelper.TasksClient({ url: ${JSON.stringify(shim.url)} });
        const greeting = await tasks.callTool('greet', { name: 'Browser' });
        return greeting.content[0].text;
      })()`,
      page,
    );
    expect(outcome).toBe('Hello, Browser!');
  });

  it('type-checks an app that imports values and types from both entries under NodeNext resolution', async () => {
    writeFileSync(
      join(app, 'app.ts'),
      `import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TasksClient, tasksClientFor, TasksClientForError, type TaskSnapshot, type TasksClientForOptions } from 'mcp-tasks-shim/client';
import { FileTaskIdStore } from 'mcp-tasks-shim/client/node';
export function helper(client: Client, options: TasksClientForOptions): TasksClient {
  return tasksClientFor(client, { ...options, taskStore: new FileTaskIdStore('ids.json') });
}
export const code = (err: TasksClientForError): 'not-connected' | 'unsupported-transport' | 'options-after-create' => err.code;
export const status = (task: TaskSnapshot): string => task.status;
// @ts-expect-error the helper's options never take a url: it comes from the SDK client's transport
export const wrong: TasksClientForOptions = { url: 'http://x' };
`,
    );
    // No @types/node: the helper's declarations must not need them.
    const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: [] };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['app.ts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await expect(sh(app, process.execPath, [tsc, '-p', 'tsconfig.json'], 60_000)).resolves.toBe('');
  });
});
