/**
 * Seven days of recorded traffic in a shim's Redis aggregates, written through the same Aggregator
 * and AggregateStore a replica uses, so the dashboard API is measured on the data it will really
 * read before a cutover: a week of minute/hour buckets, hundreds of clients, dozens of tools.
 */
import { Aggregator } from '../../src/observe/aggregator.js';
import type { ObservedWire } from '../../src/observe/events.js';
import { HOUR_MS, MINUTE_MS } from '../../src/observe/layout.js';
import { RedisAggregateStore } from '../../src/observe/redis-aggregates.js';

export interface SeedOptions {
  redisUrl: string;
  prefix: string;
  days: number;
  /** Requests recorded per simulated minute. */
  perMinute: number;
  clients: number;
  tools: number;
}

/** The week the dashboard scenario is measured on. */
export const DASHBOARD_SEED = { days: 7, perMinute: 60, clients: 300, tools: 40 } as const;

export interface SeedSummary {
  requests: number;
  taskEvents: number;
  batches: number;
  ms: number;
}

const WIRES: readonly ObservedWire[] = ['sep2663', 'mcp-2025-11-25', 'tasks-create', 'passthrough'];
const METHODS: Record<ObservedWire, readonly string[]> = {
  sep2663: ['tools/call', 'tasks/get', 'tasks/get', 'tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen'],
  'mcp-2025-11-25': ['tools/call', 'tasks/get', 'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel'],
  'tasks-create': ['tasks/create', 'tasks/status', 'tasks/status', 'tasks/list'],
  passthrough: ['initialize', 'tools/list', 'ping', 'resources/read', 'prompts/get'],
};
const OUTCOMES = ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', '-32602', '-32603'] as const;

/** A deterministic generator, so every run seeds the same week. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

export async function seedTraffic(options: SeedOptions): Promise<SeedSummary> {
  const started = Date.now();
  const store = new RedisAggregateStore({ url: options.redisUrl, prefix: options.prefix });
  const random = lcg(2663);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const end = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
  let simulated = end - options.days * 24 * HOUR_MS;
  const aggregator = new Aggregator(() => simulated);
  let requests = 0;
  let taskEvents = 0;
  let batches = 0;
  try {
    // Its connection has no offline queue: a write before it is ready would be refused.
    const deadline = Date.now() + 5_000;
    while (!store.ready()) {
      if (Date.now() > deadline) throw new Error(`Redis at ${options.redisUrl} did not become ready within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (; simulated < end; simulated += MINUTE_MS) {
      // The old API fades over the week, as it does when clients migrate.
      const progress = 1 - (end - simulated) / (options.days * 24 * HOUR_MS);
      for (let i = 0; i < options.perMinute; i++) {
        const wire = random() < 0.3 + 0.5 * progress ? 'sep2663' : pick(WIRES.slice(1));
        const method = pick(METHODS[wire]);
        const client = Math.floor(random() * options.clients);
        const tool = method === 'tools/call' || method === 'tasks/create' ? `tool_${Math.floor(random() * options.tools)}` : undefined;
        aggregator.request({
          wire,
          method,
          tool,
          clientName: `client-${client}`,
          clientVersion: `1.${client % 7}.0`,
          principal: `tenant-${client % 40}`,
          outcome: pick(OUTCOMES),
          latencyMs: random() * random() * 400,
          at: simulated + Math.floor(random() * MINUTE_MS),
        });
        requests++;
        if (tool && wire !== 'passthrough') {
          const createdAt = simulated;
          const taskWire = wire === 'tasks-create' ? 'tasks-create' : wire;
          aggregator.task({ kind: 'created', wire: taskWire, tool, createdAt, expiresAt: createdAt + HOUR_MS, at: createdAt });
          aggregator.task({ kind: pick(['completed', 'completed', 'completed', 'failed', 'cancelled'] as const), wire: taskWire, tool, createdAt, expiresAt: createdAt + HOUR_MS, at: createdAt + Math.floor(random() * 30_000) });
          taskEvents += 2;
        }
      }
      if ((simulated + MINUTE_MS) % HOUR_MS === 0) {
        const batch = aggregator.take();
        if (batch) {
          await store.write(batch);
          batches++;
        }
      }
    }
    const last = aggregator.take();
    if (last) {
      await store.write(last);
      batches++;
    }
  } finally {
    await store.close();
  }
  return { requests, taskEvents, batches, ms: Date.now() - started };
}
