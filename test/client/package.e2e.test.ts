import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';
import { installApp, packagesBesides, packClient, ROOT, sh, type PackedTarball } from '../support/packed-app.js';

const SDK = '@modelcontextprotocol/sdk';
const SDK_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', SDK, 'package.json'), 'utf8')) as { version: string }).version;
const MAX_EXTRA_BYTES = 5 * 1024 * 1024;

let dir: string;
let clientApp: string;
let bareApp: string;
let client: PackedTarball;
let shim: ShimProcess;

// Packing (the package's own prepack runs tsc) and two installs: bounded, and run side by side.
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mts-client-pack-'));
  clientApp = join(dir, 'client-app');
  bareApp = join(dir, 'bare-app');
  for (const app of [clientApp, bareApp]) mkdirSync(app);
  [client, shim] = await Promise.all([packClient(dir), startShimProcess()]);
  await Promise.all([installApp(clientApp, [client.path, `${SDK}@${SDK_VERSION}`]), installApp(bareApp, [client.path])]);
}, 240_000);

afterAll(async () => {
  await shim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs an ES module in plain Node inside `app` and returns what it printed as JSON. */
async function nodeIn(app: string, source: string): Promise<unknown> {
  return JSON.parse(await sh(app, process.execPath, ['--input-type=module', '-e', source], 30_000));
}

describe('the client package, packed and installed into an app', () => {
  it('ships compiled ESM and .d.ts only, with every export pointing at them', () => {
    expect(client.files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts']) expect(client.files).toContain(file);
    const manifest = JSON.parse(readFileSync(join(clientApp, 'node_modules/@mcp-tasks-shim/client/package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
      peerDependencies: Record<string, string>;
      dependencies?: Record<string, string>;
    };
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
    expect(targets.filter((t) => t.endsWith('.ts') && !t.endsWith('.d.ts'))).toEqual([]);
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.peerDependencies)).toEqual([SDK]);
    // Optional: an app that calls TasksClient directly, without the SDK, does not get it installed.
    expect(readdirSync(join(bareApp, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@mcp-tasks-shim']);
  });

  it('calls a tool on a running shim from plain Node, through an SDK Client and tasksClientFor', async () => {
    const storeFile = join(dir, 'task-ids.json');
    const printed = await nodeIn(
      clientApp,
      `
      import { Client } from '${SDK}/client/index.js';
      import { StreamableHTTPClientTransport } from '${SDK}/client/streamableHttp.js';
      import { tasksClientFor } from '@mcp-tasks-shim/client';
      import { FileTaskIdStore } from '@mcp-tasks-shim/client/node';
      const client = new Client({ name: 'packed-app', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(${JSON.stringify(shim.url)})));
      const tasks = tasksClientFor(client, { taskStore: new FileTaskIdStore(${JSON.stringify(storeFile)}) });
      const greeting = await tasks.callTool('greet', { name: 'Packed' });
      const started = await tasks.startTool('slow_compute', { seconds: 1 });
      const stored = (await new FileTaskIdStore(${JSON.stringify(storeFile)}).list()).map((e) => e.taskId);
      await client.close();
      console.log(JSON.stringify({ text: greeting.content[0].text, kind: started.kind, stored: stored.includes(started.task?.taskId) }));
      `,
    );
    expect(printed).toEqual({ text: 'Hello, Packed!', kind: 'task', stored: true });
  });

  it('bundles for the browser without the SDK installed and with no node: import, and the bundle talks to the shim with browser globals only', async () => {
    const bundled = await build({
      stdin: { contents: "export { TasksClient, tasksClientFor } from '@mcp-tasks-shim/client';", resolveDir: bareApp, loader: 'js' },
      absWorkingDir: bareApp,
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'tasksHelper',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(bundled.errors).toEqual([]);
    expect(Object.keys(bundled.metafile.inputs).filter((input) => input.startsWith('node:') || input.includes('file-task-id-store'))).toEqual([]);

    // What a browser page has, and nothing of Node's (no process, Buffer, require).
    const browserGlobals = { fetch, Headers, Request, Response, URL, AbortController, AbortSignal, DOMException, TextEncoder, TextDecoder, ReadableStream, btoa, atob, setTimeout, clearTimeout, crypto, console };
    const page = createContext({ ...browserGlobals });
    runInContext(bundled.outputFiles[0]!.text, page);
    const outcome = await runInContext(
      `(async () => {
        const tasks = new tasksHelper.TasksClient({ url: ${JSON.stringify(shim.url)} });
        const greeting = await tasks.callTool('greet', { name: 'Browser' });
        // A non-ASCII task id travels base64-encoded in Mcp-Name: the shim answers it like any unknown id.
        const unknown = await tasks.getTask('tâche-inconnue').then(() => null, (err) => ({ name: err.name, code: err.code }));
        return JSON.stringify({ text: greeting.content[0].text, unknown });
      })()`,
      page,
    );
    expect(JSON.parse(outcome as string)).toEqual({ text: 'Hello, Browser!', unknown: { name: 'McpRequestError', code: -32602 } });
  });

  it(`adds at most ${MAX_EXTRA_BYTES / 1024 / 1024} MB of node_modules besides the SDK and what the SDK itself installs`, () => {
    const extra = packagesBesides(clientApp, SDK);
    expect(extra.map((p) => p.path)).toEqual(['node_modules/@mcp-tasks-shim/client']);
    const bytes = extra.reduce((sum, p) => sum + p.bytes, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(MAX_EXTRA_BYTES);
    // Without the SDK, the package is the whole of node_modules.
    expect(packagesBesides(bareApp, SDK)).toEqual(extra);
  });
});

describe('the client package, type-checked in an app', () => {
  it('type-checks an app that imports values and types from both entries under NodeNext resolution', async () => {
    writeFileSync(
      join(clientApp, 'app.ts'),
      `import type { Client } from '${SDK}/client/index.js';
import { TasksClient, tasksClientFor, TasksClientForError, type TaskSnapshot, type TasksClientForOptions } from '@mcp-tasks-shim/client';
import { FileTaskIdStore } from '@mcp-tasks-shim/client/node';
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
    writeFileSync(join(clientApp, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['app.ts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await expect(sh(clientApp, process.execPath, [tsc, '-p', 'tsconfig.json'], 60_000)).resolves.toBe('');
  });
});
