import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Requests per second over all connections (autocannon overallRate); unset = as fast as possible. */
  rate?: number;
}

export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  ok: number;
}

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url));

/** One autocannon run in a separate process, bounded by its duration plus a margin. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationS + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`load worker failed (${code}): ${err}`));
      resolve(JSON.parse(line) as LoadResult);
    });
  });
}
