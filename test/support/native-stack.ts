import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { NativeStats } from '../../src/demo-native-upstream/server.js';
import { spawnNativeUpstream, type DemoUpstreamProcess } from './demo-upstream-process.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { startShimProcess, type ShimProcess } from './shim-process.js';
import type { StoreKind } from './e2e-stack.js';

export interface NativeStackOptions {
  /** One shim per store kind listed (default: redis and embedded). */
  stores?: StoreKind[];
  /** Arguments of the native demo upstream (`--quiet`, `--max-ttl-ms N`, `--poll-interval-ms N`). */
  upstreamArgs?: string[];
  /** Arguments of every shim. */
  shimArgs?: string[];
  /** Another upstream process instead of the native demo (its `/stats` is what `stats()` reads). */
  spawnUpstream?: () => Promise<DemoUpstreamProcess>;
}

export interface NativeStack<Stats = NativeStats> {
  redis: RedisServer;
  upstream: DemoUpstreamProcess;
  shim(kind: StoreKind): ShimProcess;
  /** Another shim on the same upstream and Redis, stopped with the stack. */
  startShim(args?: string[]): Promise<ShimProcess>;
  /** What the upstream counted and holds (GET /stats). */
  stats(): Promise<Stats>;
}

/**
 * Shim arguments that make `native_confirm` a task at once (a sync window of 0 ms): its
 * elicitation then arrives inside the task as `inputRequests`, where a SEP-2663 client that
 * declares elicitation would otherwise get it before the task exists, as MRTR. `more` adds
 * policies, e.g. a window long enough for an MRTR question on a loaded host.
 */
export function inTaskInputArgs(more: Record<string, { mode: string; syncWindowMs: number }> = {}): string[] {
  const path = join(mkdtempSync(join(tmpdir(), 'mts-native-policy-')), 'policy.json');
  writeFileSync(path, JSON.stringify({ tools: { native_confirm: { mode: 'required', syncWindowMs: 0 }, ...more } }));
  return ['--policy', path];
}

/** A redis-server, the native demo upstream (the SDK's own task server, or `spawnUpstream`'s) and a shim per store. */
export function useNativeStack<Stats = NativeStats>(options: NativeStackOptions = {}): NativeStack<Stats> {
  const stores = options.stores ?? ['redis', 'embedded'];
  let redis: RedisServer | undefined;
  let upstream: DemoUpstreamProcess | undefined;
  const shims = new Map<StoreKind, ShimProcess>();
  const extra: ShimProcess[] = [];

  const stack: NativeStack<Stats> = {
    get redis() {
      if (!redis) throw new Error('the stack is not started');
      return redis;
    },
    get upstream() {
      if (!upstream) throw new Error('the stack is not started');
      return upstream;
    },
    shim(kind) {
      const shim = shims.get(kind);
      if (!shim) throw new Error(`no ${kind} shim in this stack`);
      return shim;
    },
    async startShim(args = []) {
      const shim = await startShimProcess({ upstreamUrl: stack.upstream.url, redisUrl: stack.redis.url, args: [...(options.shimArgs ?? []), ...args] });
      extra.push(shim);
      return shim;
    },
    async stats() {
      const res = await fetch(new URL('/stats', stack.upstream.url));
      return (await res.json()) as Stats;
    },
  };

  beforeAll(async () => {
    const spawnUpstream = options.spawnUpstream ?? (() => spawnNativeUpstream(['--port', '0', ...(options.upstreamArgs ?? [])]));
    [redis, upstream] = await Promise.all([startRedis(), spawnUpstream()]);
    const started = await Promise.all(
      stores.map((kind) =>
        startShimProcess({ upstreamUrl: stack.upstream.url, redisUrl: kind === 'redis' ? stack.redis.url : undefined, args: options.shimArgs }),
      ),
    );
    stores.forEach((kind, i) => shims.set(kind, started[i] as ShimProcess));
  });

  afterAll(async () => {
    await Promise.all([...shims.values(), ...extra].map((shim) => shim.stop()));
    upstream?.killGroup();
    await upstream?.exited;
    await redis?.stop();
  });

  return stack;
}
