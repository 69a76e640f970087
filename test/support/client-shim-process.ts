import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_LINE = /^mcp-tasks-shim listening on (\S+)$/;

export interface ShimProcess {
  /** The MCP endpoint. */
  url: string;
  child: ChildProcess;
  /** Kills the whole process group, so that nothing the CLI started outlives the test. */
  stop(): Promise<void>;
}

/**
 * Runs the shim the way users do (`node bin/mcp-tasks-shim.js start --port 0`, fronting the
 * demo upstream) and waits, bounded, for its ready line.
 */
export async function startShimProcess(env: NodeJS.ProcessEnv = {}, readyTimeoutMs = 20_000): Promise<ShimProcess> {
  const child = spawn(process.execPath, ['bin/mcp-tasks-shim.js', 'start', '--port', '0'], {
    cwd: ROOT,
    // Stopping a test's shim waits for no load balancer: no pre-stop delay.
    env: { ...process.env, SHIM_SHUTDOWN_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = once(child, 'exit');
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // The group is already gone.
    }
  };
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup('SIGKILL');
      reject(new Error(`shim printed no ready line within ${readyTimeoutMs} ms; stderr: ${stderr}`));
    }, readyTimeoutMs);
    lines.on('line', (line) => {
      const match = READY_LINE.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`shim exited with ${String(code)} before ready; stderr: ${stderr}`));
    });
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killGroup('SIGTERM');
    const timer = setTimeout(() => killGroup('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
    // Anything of the group that outlived the CLI.
    killGroup('SIGKILL');
  };
  return { url, child, stop };
}
