import { afterAll, beforeAll } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from './demo-upstream-process.js';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.js';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';
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
  /** Run the redis shims on a three-master Redis Cluster instead of one redis-server. */
  cluster?: boolean;
}

export interface Stack {
  redis: RedisServer;
  /** Only with `cluster: true`. */
  cluster: RedisCluster;
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
  let cluster: RedisCluster | undefined;
  let upstream: DemoUpstreamProcess | undefined;
  let recorder: RecordingProxy | undefined;
  const shims = new Map<StoreKind, ShimProcess>();
  const extra: ShimProcess[] = [];

  const stack: Stack = {
    get redis() {
      if (!redis) throw new Error('the stack is not started');
      return redis;
    },
    get cluster() {
      if (!cluster) throw new Error('the stack has no Redis Cluster (cluster: true)');
      return cluster;
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
      const target = redisFor(opts.store ?? 'redis');
      const shim = await startShimProcess({
        upstreamUrl: stack.upstreamUrl,
        redisUrl: target.redisUrl,
        env: { ...options.env, ...opts.env },
        args: [...(target.args ?? []), ...(options.args ?? []), ...(opts.args ?? [])],
      });
      extra.push(shim);
      return shim;
    },
  };

  /** Where a shim of `kind` keeps its tasks: the cluster's seed list, one redis-server, or nothing. */
  function redisFor(kind: StoreKind): { redisUrl?: string; args?: string[] } {
    if (kind !== 'redis') return {};
    if (cluster) return { redisUrl: cluster.url, args: ['--redis-cluster'] };
    return { redisUrl: stack.redis.url };
  }

  beforeAll(async () => {
    const store = options.cluster ? startRedisCluster().then((started) => (cluster = started)) : startRedis().then((started) => (redis = started));
    [, upstream] = await Promise.all([store, spawnDemoUpstream(['--port', '0'])]);
    if (options.record) recorder = await startRecordingProxy(upstream.url);
    const started = await Promise.all(
      stores.map((kind) =>
        startShimProcess({
          upstreamUrl: stack.upstreamUrl,
          redisUrl: redisFor(kind).redisUrl,
          env: options.env,
          args: [...(redisFor(kind).args ?? []), ...(options.args ?? [])],
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
    await cluster?.stop();
  });

  return stack;
}
