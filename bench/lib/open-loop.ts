/**
 * An open-loop load: requests at a constant arrival rate, each timed from the moment it was due,
 * so that a stalled server is charged for every request that had to wait, as a real client's
 * requests would (autocannon's `overallRate` is neither: see open-loop-worker.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface OpenLoopSpec {
  url: string;
  /** Requests per second over all connections, due at evenly spaced times. */
  rate: number;
  /** Keep-alive connections the requests go out on (one request in flight on each). */
  connections: number;
  /** The measured window; a warm-up at the same rate comes first. */
  durationS: number;
  warmupS?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface OpenLoopResult {
  /** Requests due in the measured window. */
  offered: number;
  /** 2xx answers to those, per second of the window. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Requests still unanswered 10 s after the window. */
  timeouts: number;
  /** From the time each request was due to its whole answer (ms), exact over all answered requests of the window. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /** Requests that found every connection busy when due, and waited for one. */
  queued: number;
  /** p99 of how late the generator itself sent a request that found a free connection (ms): its own timer granularity. */
  sendLagP99: number;
}

const WORKER = fileURLToPath(new URL('./open-loop-worker.ts', import.meta.url));

/** One open-loop run in its own process (not sharing the bench's event loop), bounded in time. */
export function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationS + (spec.warmupS ?? 1) + 40) * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`open-loop worker failed (${code}): ${err}`));
      resolve(JSON.parse(line) as OpenLoopResult);
    });
  });
}
