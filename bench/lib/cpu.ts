import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { sleep } from './proc.js';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ); 100 on every Linux we run on. */
const TICKS_PER_S = 100;

/** CPU time (user + system) a process has used so far, in ms; Linux only. */
export function cpuMs(pid: number): number {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** A process is idle once it uses less than this share of a core. */
const IDLE_SHARE = 0.1;
const IDLE_WAIT_MS = 30_000;

/**
 * Waits (at most 30 s) until a process uses less than a tenth of a core, and says how long that
 * took: a shim started on a recorded week digests it first (a profiler, when on, costs a few per
 * cent all along).
 */
export async function untilIdle(pid: number): Promise<number> {
  const started = Date.now();
  for (let before = cpuMs(pid); Date.now() - started < IDLE_WAIT_MS; ) {
    await sleep(500);
    const now = cpuMs(pid);
    if (now - before < 500 * IDLE_SHARE) break;
    before = now;
  }
  return Date.now() - started;
}

/** The pid of the redis-server at `url`, from its own INFO. */
export async function redisPid(url: string): Promise<number> {
  const redis = new Redis(url);
  try {
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
  } finally {
    redis.disconnect();
  }
}
