/** Starting the systems under test: Redis, the demo upstream, the shim, the baselines. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRedis, type RedisServer } from '../../test/support/redis-server.js';
import { get } from './http.js';
import { ROOT, spawnServer, type Served } from './proc.js';

export { startRedis, type RedisServer };

const TSX = ['--import', 'tsx'];

/** Policies for the bench: `greet` (instant) and `slow_compute` always run as tasks. */
export function policyFile(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'bench-policy.json');
  writeFileSync(path, JSON.stringify({ tools: { greet: 'required', slow_compute: 'required' } }));
  return path;
}

export function startUpstream(): Promise<Served> {
  return spawnServer('demo upstream', [...TSX, 'src/demo-upstream/main.ts', '--port', '0'], { ready: /demo upstream listening on (\S+)/ });
}

export interface ShimStart {
  upstream: string;
  /** Absent: the embedded store. */
  redis?: string;
  policy: string;
  env?: Record<string, string>;
  cpuProfDir?: string;
  /** Absent: `all`, the API and the worker in one process. */
  role?: 'api' | 'worker';
  /** Another checkout (built) whose CLI to run instead of this one's: an A/B of two commits. */
  checkout?: string;
  /** Node arguments before the CLI's path (a preloaded probe: bench/profile.ts BENCH_ALLOC=1). */
  nodeArgs?: string[];
}

export function startShim(o: ShimStart): Promise<Served> {
  const role = o.role ? ['--role', o.role] : [];
  return spawnServer(
    o.role ? `shim (${o.role})` : 'shim',
    [...(o.nodeArgs ?? []), join(o.checkout ?? ROOT, 'bin/mcp-tasks-shim.js'), 'serve', '--upstream', o.upstream, ...(o.redis ? ['--redis', o.redis] : []), '--port', '0', '--policy', o.policy, ...role],
    // A benchmark stops its servers at once: no pre-stop delay for a balancer.
    { ready: /mcp-tasks-shim listening on (\S+)/, env: { SHIM_SHUTDOWN_DELAY_MS: '0', ...o.env }, cpuProfDir: o.cpuProfDir },
  );
}

/** The shim's `mcp_shim_queue_depth` gauge (jobs waiting or running in its queue), from its /metrics. */
export async function queueDepth(shimUrl: string): Promise<number> {
  const reply = await get(new URL('/metrics', shimUrl).href);
  const match = /^mcp_shim_queue_depth(?:\{[^}]*\})? (\d+)/m.exec(reply.text);
  if (reply.status !== 200 || !match) throw new Error(`no mcp_shim_queue_depth at ${shimUrl}: HTTP ${reply.status}`);
  return Number(match[1]);
}

export function startSdkBaseline(): Promise<Served> {
  return spawnServer('sdk task server', [...TSX, 'bench/baselines/sdk-task-server.ts'], { ready: /sdk-task-server listening on (\S+)/ });
}

export function startSdkPlainServer(): Promise<Served> {
  return spawnServer('sdk plain server', [...TSX, 'bench/baselines/sdk-plain-server.ts'], { ready: /sdk-plain-server listening on (\S+)/ });
}

export function startBareRedis(redis: string): Promise<Served> {
  return spawnServer('bare node+redis', [...TSX, 'bench/baselines/bare-redis.ts', '--redis', redis], { ready: /bare-redis listening on (\S+)/ });
}

export function startPipeProxy(upstream: string): Promise<Served> {
  return spawnServer('pipe proxy', [...TSX, 'bench/baselines/pipe-proxy.ts', '--upstream', upstream], { ready: /pipe-proxy listening on (\S+)/ });
}
