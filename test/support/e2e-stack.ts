import { afterAll, beforeAll } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from './demo-upstream-process.js';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { startShimProcess, type ShimProcess } from './shim-process.js';

export type StoreKind = 'redis' | 'embedded';

export interface StackOptions {
  /** One shim per store kind listed (default: redis only). */
  stores?: StoreKind[];
  /** Environment of every shim of the stack. */
  env?: Record<string, string>;
  args?: string[];
  /** Put a recording proxy between the shims and the upstream. */
  record?: boolean;
}

export interface Stack {
  redis: RedisServer;
  upstream: DemoUpstreamProcess;
  /** What the shims sent the upstream; only with `record: true`. */
  recorder: RecordingProxy;
  /** Where the shims send upstream traffic (the recorder, when there is one). */
  upstreamUrl: string;
  shim(kind?: StoreKind): ShimProcess;
  /** Another shim on the same upstream (and Redis), stopped with the stack. */
  startShim(opts?: { store?: StoreKind; env?: Record<string, string>; args?: string[] }): Promise<ShimProcess>;
}

/**
 * One redis-server, one demo upstream and the shims of a test file, started in `beforeAll`
 * and stopped in `afterAll`, so that a file pays for its processes once.
 */
export function useStack(options: StackOptions = {}): Stack {
  const stores = options.stores ?? ['redis'];
  let redis: RedisServer | undefined;
  let upstream: DemoUpstreamProcess | undefined;
  let recorder: RecordingProxy | undefined;
  const shims = new Map<StoreKind, ShimProcess>();
  const extra: ShimProcess[] = [];

  const stack: Stack = {
    get redis() {
      if (!redis) throw new Error('the stack is not started');
      return redis;
    },
    get upstream() {
      if (!upstream) throw new Error('the stack is not started');
      return upstream;
    },
    get recorder() {
      if (!recorder) throw new Error('the stack has no recorder (record: true)');
      return recorder;
    },
    get upstreamUrl() {
      return recorder?.url ?? stack.upstream.url;
    },
    shim(kind = stores[0] as StoreKind) {
      const shim = shims.get(kind);
      if (!shim) throw new Error(`no ${kind} shim in this stack`);
      return shim;
    },
    async startShim(opts = {}) {
      const shim = await startShimProcess({
        upstreamUrl: stack.upstreamUrl,
        redisUrl: (opts.store ?? 'redis') === 'redis' ? stack.redis.url : undefined,
        env: { ...options.env, ...opts.env },
        args: [...(options.args ?? []), ...(opts.args ?? [])],
      });
      extra.push(shim);
      return shim;
    },
  };

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), spawnDemoUpstream(['--port', '0'])]);
    if (options.record) recorder = await startRecordingProxy(upstream.url);
    const started = await Promise.all(
      stores.map((kind) =>
        startShimProcess({
          upstreamUrl: stack.upstreamUrl,
          redisUrl: kind === 'redis' ? redis!.url : undefined,
          env: options.env,
          args: options.args,
        }),
      ),
    );
    stores.forEach((kind, i) => shims.set(kind, started[i] as ShimProcess));
  });

  afterAll(async () => {
    await Promise.all([...shims.values(), ...extra].map((shim) => shim.stop()));
    await recorder?.close();
    upstream?.killGroup();
    await upstream?.exited;
    await redis?.stop();
  });

  return stack;
}
