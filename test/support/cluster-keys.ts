import { Redis } from 'ioredis';
import type { RedisCluster } from './redis-cluster.js';

/** Every key matching `pattern` on every node of the cluster (a SCAN per node: SCAN sees one node only). */
export async function clusterKeys(cluster: RedisCluster, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of cluster.nodes) {
    const redis = new Redis(node.url);
    try {
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
  return keys.sort();
}

/** The cluster slot of `key`, as the cluster itself computes it. */
export async function keySlot(cluster: RedisCluster, key: string): Promise<number> {
  const redis = new Redis(cluster.nodes[0]!.url);
  try {
    return (await redis.call('CLUSTER', 'KEYSLOT', key)) as number;
  } finally {
    redis.disconnect();
  }
}
