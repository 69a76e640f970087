import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from './redis-server.js';

export interface RedisCluster {
  /** Every node's URL, comma-separated: the seed list a shim takes with `--redis-cluster`. */
  url: string;
  nodes: RedisServer[];
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/** Each master's slots; together they cover 0..16383. */
const SLOT_RANGES: ReadonlyArray<[number, number]> = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
];
const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 50;

/**
 * A real three-master Redis Cluster of `redis-server` processes on free loopback ports: each node
 * gets a third of the slots, they meet, and this resolves once every node says `cluster_state:ok`.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const nodes = await Promise.all(
    SLOT_RANGES.map(() =>
      startRedis({ extraArgs: (dir) => ['--cluster-enabled', 'yes', '--cluster-config-file', `${dir}/nodes.conf`] }),
    ),
  );
  const cluster: RedisCluster = {
    url: nodes.map((node) => node.url).join(','),
    nodes,
    async stop() {
      await Promise.all(nodes.map((node) => node.stop()));
    },
  };
  const admins = nodes.map((node) => new Redis(node.url));
  try {
    await Promise.all(admins.map((admin, i) => admin.call('CLUSTER', 'ADDSLOTSRANGE', ...SLOT_RANGES[i]!.map(String))));
    await Promise.all(nodes.slice(1).map((node) => admins[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(node.port))));
    await waitForState(admins);
  } catch (error) {
    await cluster.stop();
    throw error;
  } finally {
    admins.forEach((admin) => admin.disconnect());
  }
  return cluster;
}

/** Bounded poll until every node reports the cluster ok and knows every other node. */
async function waitForState(admins: Redis[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO') as Promise<string>));
    const ready = infos.every((info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${admins.length}`));
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`the Redis Cluster was not ok within ${READY_TIMEOUT_MS} ms:\n${infos.join('\n---\n')}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
