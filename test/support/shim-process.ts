import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_LINE = /^mcp-tasks-shim listening on (\S+)$/;
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

export interface ShimProcessOptions {
  upstreamUrl: string;
  /** Absent: the embedded store. */
  redisUrl?: string;
  /** Added to the inherited environment. */
  env?: Record<string, string>;
  /** Extra CLI arguments after the ones built here. */
  args?: string[];
  /** The policy file's content; default: the demo tools' policies. */
  policy?: Record<string, unknown>;
  /** A policy file to pass as it is, instead of one written from `policy`. */
  policyFile?: string;
  /**
   * How the CLI is run; default `node bin/mcp-tasks-shim.js` in this checkout. An installed copy
   * gets its own command (`npx mcp-tasks-shim`), directory and environment.
   */
  cli?: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv };
}

export interface ShimProcess {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41919/mcp`. */
  url: string;
  /** The server root, for `/healthz` and `/readyz`. */
  baseUrl: string;
  pid: number;
  /** What the process wrote to stderr so far, for failure messages. */
  stderr(): string;
  /** What the process wrote to stdout so far (its start-up lines). */
  stdout(): string;
  /** Sends `signal` (default SIGTERM) to the process group, waits for the exit, SIGKILLs after a bound. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole group, at once. */
  kill(): void;
  /** Sends `signal` to the process only, without waiting (a graceful-shutdown test watches what follows). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Processes still running when the test process exits, so that none outlives it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

/**
 * Runs the shim as its users do (`node bin/mcp-tasks-shim.js serve …`) with the demo tools'
 * policies, and waits (bounded) for the line that names its URL.
 */
export async function startShimProcess(opts: ShimProcessOptions): Promise<ShimProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'mts-shim-'));
  const policyFile = opts.policyFile ?? join(dir, 'policy.json');
  if (!opts.policyFile) writeFileSync(policyFile, JSON.stringify(opts.policy ?? { tools: DEMO_TOOL_POLICIES }));
  const cli = opts.cli ?? { command: process.execPath, args: ['bin/mcp-tasks-shim.js'], cwd: ROOT, env: process.env };
  const args = [
    ...cli.args,
    'serve',
    '--upstream',
    opts.upstreamUrl,
    '--port',
    '0',
    '--policy',
    policyFile,
    ...(opts.redisUrl ? ['--redis', opts.redisUrl] : []),
    ...(opts.args ?? []),
  ];
  const child = spawn(cli.command, args, {
    cwd: cli.cwd,
    // No inherited store or port settings: each test says what it wants. No pre-stop delay unless a
    // test asks for one: stopping a test's shim waits for no load balancer.
    env: { ...withoutShimEnv(cli.env), SHIM_SHUTDOWN_DELAY_MS: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

  let stdout = '';
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => (stdout += `${line}\n`));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`shim printed no URL within ${READY_TIMEOUT_MS} ms; stderr:\n${stderr}`)), READY_TIMEOUT_MS);
      lines.on('line', (line) => {
        const match = READY_LINE.exec(line);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`shim exited (${code ?? signal}) before listening; stderr:\n${stderr}`));
      });
    });
    return {
      url,
      baseUrl: new URL(url).origin,
      pid: child.pid!,
      stderr: () => stderr,
      stdout: () => stdout,
      async stop(signal: NodeJS.Signals = 'SIGTERM') {
        if (child.exitCode === null && child.signalCode === null) {
          killGroup(child, signal);
          const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
          const result = await exited;
          clearTimeout(timer);
          return result;
        }
        return exited;
      },
      kill: () => killGroup(child, 'SIGKILL'),
      signal: (signal) => {
        child.kill(signal);
      },
      exited,
    };
  } catch (err) {
    killGroup(child, 'SIGKILL');
    await exited;
    throw err;
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group is already gone.
  }
}

/** The shim reads these from its environment; a developer's shell must not change a test. */
function withoutShimEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of Object.keys(copy)) {
    if (name.startsWith('SHIM_') || ['PORT', 'HOST', 'UPSTREAM_URL', 'REDIS_URL'].includes(name)) delete copy[name];
  }
  return copy;
}
