import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Served {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Matches the line that announces the URL; group 1 is the URL. */
  ready: RegExp;
  timeoutMs?: number;
  /** Directory for `--cpu-prof` output; profiling is off when unset. */
  cpuProfDir?: string;
}

/** Starts a server process (node + args) and resolves with the URL it prints. */
export function spawnServer(name: string, args: string[], options: SpawnOptions): Promise<Served> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...options.env };
  env.NODE_OPTIONS = '';
  // Node 20 refuses --cpu-prof in NODE_OPTIONS, so it goes on the command line.
  const profile = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  const child = spawn(process.execPath, [...profile, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${options.timeoutMs ?? 20_000} ms:\n${output}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = options.ready.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({ name, url: match[1]!, pid: child.pid!, child, stop: () => stopChild(child) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready:\n${output}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
  await exited;
  clearTimeout(timer);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
