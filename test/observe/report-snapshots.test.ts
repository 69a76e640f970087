import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { CutoverControls } from '../../src/cutover/controls.js';
import { CutoverStage } from '../../src/cutover/stage.js';
import type { AggregateStore, ClientRecord, Counters } from '../../src/observe/aggregates.js';
import { Aggregator } from '../../src/observe/aggregator.js';
import { OBSERVED_WIRES } from '../../src/observe/events.js';
import { HOUR_MS, MINUTE_MS, type Resolution } from '../../src/observe/layout.js';
import { ShimMetrics } from '../../src/observe/metrics.js';
import { RANGE_NAMES } from '../../src/observe/ranges.js';
import { RedisAggregateStore } from '../../src/observe/redis-aggregates.js';
import { Reports, SNAPSHOT_MS, type Endpoint } from '../../src/observe/report.js';
import { observabilityRoutes } from '../../src/observe/routes.js';
import { notifyingWrites } from '../../src/observe/written-store.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil } from '../support/sep2663-client.js';

const ENDPOINTS: Endpoint[] = ['overview', 'traffic', 'clients', 'tasks', 'latency', 'verdict', 'cutover', 'recording'];

/** The real store, counting the reads that reach it. */
class CountingStore implements AggregateStore {
  readonly kind = 'redis' as const;
  bucketReads = 0;
  bucketsRead = 0;
  clientReads = 0;
  /** Bucket reads to refuse, as an unreachable store does. */
  failReads = 0;
  readyAtFirstRead: boolean | undefined;
  constructor(readonly inner: RedisAggregateStore) {}
  ready = () => this.inner.ready();
  write: AggregateStore['write'] = (batch) => this.inner.write(batch);
  readMeta = () => this.inner.readMeta();
  close = () => this.inner.close();
  readClients(): Promise<ClientRecord[]> {
    this.clientReads++;
    return this.inner.readClients();
  }
  readBuckets(resolution: Resolution, starts: readonly number[]): Promise<Counters[]> {
    this.bucketReads++;
    this.readyAtFirstRead ??= this.inner.ready();
    if (this.failReads > 0) {
      this.failReads--;
      return Promise.reject(new Error('unreachable'));
    }
    return this.inner.readBuckets(resolution, starts).then((buckets) => {
      this.bucketsRead += buckets.filter((bucket) => bucket.size > 0).length;
      return buckets;
    });
  }
}

describe('report snapshots', () => {
  let redis: RedisServer;
  let prefixes = 0;
  const stores: RedisAggregateStore[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await redis?.stop();
  });

  async function redisStore(prefix: string, ready = true): Promise<RedisAggregateStore> {
    const store = new RedisAggregateStore({ url: redis.url, prefix });
    stores.push(store);
    if (ready) await pollUntil(async () => store.ready(), Boolean);
    return store;
  }

  /** A clock 20 minutes into an hour; traffic of the last two hours on every wire, written as another replica would. */
  async function setup() {
    const prefix = `snap${prefixes++}`;
    let now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS + 20 * MINUTE_MS;
    const clock = { now: () => now, advance: (ms: number) => (now += ms) };
    const store = new CountingStore(await redisStore(prefix));
    const reports = new Reports(store, new CutoverStage(new CutoverControls(DEFAULT_CONFIG)), clock.now);
    const other = new Aggregator(clock.now);
    const own = new Aggregator(clock.now);
    const ownStore = notifyingWrites(store, () => reports.written());
    const record = (aggregator: Aggregator, at: number, client = 'client') => {
      OBSERVED_WIRES.forEach((wire, i) => {
        aggregator.request({ wire, method: 'tools/call', tool: 'build', principal: 'p', clientName: `${client}-${i}`, clientVersion: '1', outcome: 'ok', latencyMs: 5, at });
      });
    };
    const flush = async (aggregator: Aggregator, into: AggregateStore) => {
      const batch = aggregator.take();
      if (batch) await into.write(batch);
    };
    for (let back = 2 * HOUR_MS; back >= 0; back -= 10 * MINUTE_MS) record(other, now - back);
    await flush(other, store);
    return { clock, store, reports, other, own, ownStore, record, flush };
  }

  it('answers every endpoint of a range, and concurrent requests, from one read of its buckets and of the client table', async () => {
    const { store, reports } = await setup();
    await Promise.all(ENDPOINTS.flatMap((endpoint) => [reports.json(endpoint, '24h'), reports.json(endpoint, '24h')]));
    // One read of the closed hours, one of the open hour's minutes.
    expect(store.bucketReads).toBe(2);
    expect(store.clientReads).toBe(1);
    await reports.overview('24h');
    await reports.clients('24h');
    expect(store.bucketReads).toBe(2);
    expect(store.clientReads).toBe(1);
  });

  it('serves the JSON text of each endpoint byte for byte as JSON.stringify of its figures', async () => {
    const { reports } = await setup();
    for (const range of RANGE_NAMES) {
      const objects: Record<Endpoint, unknown> = {
        overview: await reports.overview(range),
        traffic: await reports.traffic(range),
        clients: { clients: await reports.clients(range) },
        tasks: await reports.tasks(range),
        latency: await reports.latency(range),
        verdict: await reports.verdict(),
        cutover: reports.cutover(),
        recording: await reports.recording(),
      };
      for (const endpoint of ENDPOINTS) expect(await reports.json(endpoint, range), `${endpoint} ${range}`).toBe(JSON.stringify(objects[endpoint]));
    }
  });

  it("takes in another replica's flush after SNAPSHOT_MS, and its own replica's flush at once", async () => {
    const { clock, reports, other, own, ownStore, store, record, flush } = await setup();
    const before = (await reports.overview('1h')).traffic.requests.total;
    record(other, clock.now(), 'other');
    await flush(other, store);
    expect((await reports.traffic('1h')).requests.total).toBe(before);
    expect((await reports.clients('1h')).some((row) => row.name.startsWith('other-'))).toBe(false);
    clock.advance(SNAPSHOT_MS);
    expect((await reports.traffic('1h')).requests.total).toBe(before + OBSERVED_WIRES.length);
    expect((await reports.clients('1h')).some((row) => row.name.startsWith('other-'))).toBe(true);

    record(own, clock.now(), 'own');
    await flush(own, ownStore);
    expect((await reports.traffic('1h')).requests.total).toBe(before + 2 * OBSERVED_WIRES.length);
    expect((await reports.clients('1h')).some((row) => row.name.startsWith('own-'))).toBe(true);
  });

  it('keeps no figures of a failed read: the next request reads again', async () => {
    const { reports, store } = await setup();
    store.failReads = 1;
    await expect(reports.json('traffic', '1h')).rejects.toThrow('unreachable');
    expect((await reports.traffic('1h')).requests.total).toBeGreaterThan(0);
    expect(store.bucketReads).toBe(2);
  });

  it("warms the digests at start-up even when the store's connection is not ready yet", async () => {
    const { clock } = await setup();
    const prefix = `snap${prefixes - 1}`;
    const store = new CountingStore(await redisStore(prefix, false));
    const reports = new Reports(store, new CutoverStage(new CutoverControls(DEFAULT_CONFIG)), clock.now);
    const metrics = new ShimMetrics({ replica: 'test', store: 'redis', version: '0', queueDepth: async () => 0, pendingEvents: () => 0 });
    observabilityRoutes({ reports, metrics });
    // The first pass fails (no connection yet); one a second later reads the recorded hours.
    await pollUntil(async () => store.bucketsRead, (read) => read >= 3, { timeoutMs: 5_000, intervalMs: 50 });
    expect(store.readyAtFirstRead).toBe(false);
  });
});
