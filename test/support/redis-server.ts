import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  url: string;
  port: number;
  /** The server's working directory (AOF files live here when `appendonly` is on). */
  dir: string;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
  /** Kills the server if it runs and starts it again on the same port and directory. */
  restart(): Promise<void>;
  /** Kills the server and keeps its directory, so that `restart()` brings it back (an outage). */
  halt(): Promise<void>;
  /** SIGKILL, directory kept: no chance to flush anything, as in a power cut. `restart()` brings it back. */
  crash(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 5_000;
const POLL_MS = 20;
const START_ATTEMPTS = 5;

/** Servers still running when the test process exits, so that none outlives it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A real redis-server on a free port, with persistence off unless asked for. */
export async function startRedis(opts: { appendonly?: boolean; appendfsync?: 'always' | 'everysec'; extraArgs?: (dir: string) => string[] } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mts-redis-'));
  const args = (port: number): string[] => [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    '--appendonly', opts.appendonly ? 'yes' : 'no',
    '--appendfsync', opts.appendfsync ?? 'everysec',
    '--dir', dir,
    ...(opts.extraArgs?.(dir) ?? []),
  ];
  let port = 0;
  let child: ChildProcess | undefined;
  // A port found free can be taken before redis binds it; then another is tried.
  for (let attempt = 1; !child; attempt++) {
    port = await freePort();
    try {
      child = await launch(args(port), port);
    } catch (error) {
      if (attempt >= START_ATTEMPTS) throw error;
    }
  }
  let current: ChildProcess = child;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      await kill(current);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await kill(current);
      mkdirSync(dir, { recursive: true }); // gone if the server was stopped
      current = await launch(args(port), port);
    },
    async halt() {
      await kill(current);
    },
    async crash() {
      await kill(current, 'SIGKILL');
    },
  };
}

/** A port nothing listens on right now (the OS's pick), for a process started on it next. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function launch(args: string[], port: number): Promise<ChildProcess> {
  const child = spawn(process.env.REDIS_SERVER ?? 'redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => {
    exited = true;
    running.delete(child);
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  // The log line proves that this process bound the port; PING proves that it serves it.
  while (!(output.includes('Ready to accept connections') && (await answersPing(port)))) {
    if (exited) throw new Error(`redis-server exited before answering PING on port ${port}:\n${output}`);
    if (Date.now() > deadline) {
      await kill(child);
      throw new Error(`redis-server did not answer PING on port ${port} within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return child;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
