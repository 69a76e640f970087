import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_LINE = /^demo upstream listening on (\S+)$/;
const SDK_PLAIN_READY_LINE = /^sdk upstream listening on (\S+)$/;
const SDK_TASKS_READY_LINE = /^sdk-task-server listening on (\S+)$/;
const NATIVE_READY_LINE = /^demo native upstream listening on (\S+)$/;
const SEP2663_READY_LINE = /^sep2663 upstream listening on (\S+)$/;

export interface DemoUpstreamProcess {
  url: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** tsx runs the entry in a child process of its own: killing only tsx would orphan it. */
  killGroup(): void;
}

/** Runs the entry the way the docs do (`tsx src/demo-upstream/main.ts`) and waits for its ready line. */
export function spawnDemoUpstream(args: string[] = [], env: NodeJS.ProcessEnv = {}, readyTimeoutMs = 20_000): Promise<DemoUpstreamProcess> {
  return spawnUpstreamEntry('src/demo-upstream/main.ts', READY_LINE, args, env, readyTimeoutMs);
}

/** The demo upstream that runs tasks itself (`tsx src/demo-native-upstream/main.ts`). */
export function spawnNativeUpstream(args: string[] = [], env: NodeJS.ProcessEnv = {}, readyTimeoutMs = 20_000): Promise<DemoUpstreamProcess> {
  return spawnUpstreamEntry('src/demo-native-upstream/main.ts', NATIVE_READY_LINE, args, env, readyTimeoutMs);
}

/** The official-SDK upstream with plain tools and no tasks capability (test/fixtures/sdk-plain-upstream). */
export function spawnSdkPlainUpstream(args: string[] = []): Promise<DemoUpstreamProcess> {
  return spawnUpstreamEntry('test/fixtures/sdk-plain-upstream/main.ts', SDK_PLAIN_READY_LINE, args, {}, 20_000);
}

/** The hand-written SEP-2663 server (test/fixtures/sep2663-upstream): `--port N`, `--poll-interval-ms N`. */
export function spawnSep2663Upstream(args: string[] = []): Promise<DemoUpstreamProcess> {
  return spawnUpstreamEntry('test/fixtures/sep2663-upstream/main.ts', SEP2663_READY_LINE, args, {}, 20_000);
}

/** The official SDK's own 2025-11-25 task server: declares tasks, one `required` tool `greet` (bench/baselines). */
export function spawnSdkTaskUpstream(): Promise<DemoUpstreamProcess> {
  return spawnUpstreamEntry('bench/baselines/sdk-task-server.ts', SDK_TASKS_READY_LINE, [], {}, 20_000);
}

async function spawnUpstreamEntry(
  entry: string,
  readyLine: RegExp,
  args: string[],
  env: NodeJS.ProcessEnv,
  readyTimeoutMs: number,
): Promise<DemoUpstreamProcess> {
  const child = spawn('node_modules/.bin/tsx', [entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  };
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup();
      reject(new Error(`no ready line within ${readyTimeoutMs} ms; stderr: ${stderr}`));
    }, readyTimeoutMs);
    lines.on('line', (line) => {
      const match = readyLine.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready; stderr: ${stderr}`));
    });
  });
  return { url, child, exited, killGroup };
}
