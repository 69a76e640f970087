import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { CutoverControls } from '../../src/cutover/controls.js';
import { CutoverStage } from '../../src/cutover/stage.js';
import type { AggregateStore, ClientRecord, Counters } from '../../src/observe/aggregates.js';
import { Aggregator } from '../../src/observe/aggregator.js';
import { REVALIDATE_MS } from '../../src/observe/digest-cache.js';
import { OBSERVED_WIRES, type RequestEvent } from '../../src/observe/events.js';
import { HOUR_MS, MINUTE_MS, type Resolution } from '../../src/observe/layout.js';
import { RedisAggregateStore } from '../../src/observe/redis-aggregates.js';
import { bucketStarts, RANGES, rangeFrom, type RangeName } from '../../src/observe/ranges.js';
import { Reports } from '../../src/observe/report.js';
import { digest, sumDigests } from '../../src/observe/report-digest.js';
import { clientRows, latency, tasks, traffic } from '../../src/observe/report-figures.js';
import { mergeTallies, tallyCounters, tallyExpired } from '../../src/observe/tally.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil } from '../support/sep2663-client.js';

const RANGE_NAMES = Object.keys(RANGES) as RangeName[];

/** The figures of a range computed afresh from its raw buckets (oldest first), without any cache: what the served figures must equal. */
function figuresFromBuckets(range: RangeName, now: number, buckets: Counters[], clients: ClientRecord[]) {
  const { step } = RANGES[range];
  const starts = bucketStarts(range, now);
  const digests = buckets.map(digest);
  const totals = sumDigests(digests, (i) => (starts[i] as number) + step <= now);
  const tally = mergeTallies([tallyCounters(totals.counters), tallyExpired(totals.expiring)]);
  return {
    traffic: traffic(range, now, digests),
    clients: clientRows(tally, clients, rangeFrom(range, now)),
    tasks: tasks(tally),
    latency: latency(tally),
  };
}
const TOOLS = ['build', 'deploy', 'scan'];

/** The real store, counting the buckets with anything in them that reads return (empty ones cost next to nothing). */
class CountingStore implements AggregateStore {
  readonly kind = 'redis' as const;
  bucketsRead = 0;
  constructor(readonly inner: RedisAggregateStore) {}
  ready = () => this.inner.ready();
  write: AggregateStore['write'] = (batch) => this.inner.write(batch);
  readClients = () => this.inner.readClients();
  readMeta = () => this.inner.readMeta();
  close = () => this.inner.close();
  readBuckets(resolution: Resolution, starts: readonly number[]): Promise<Counters[]> {
    return this.inner.readBuckets(resolution, starts).then((buckets) => {
      this.bucketsRead += buckets.filter((bucket) => bucket.size > 0).length;
      return buckets;
    });
  }
}

describe('report figures from bucket digests and running range totals', () => {
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

  /** A clock at 56 minutes past an hour a few hours ago (Redis expires buckets by the real clock). */
  async function setup() {
    let now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS + 56 * MINUTE_MS;
    const inner = new RedisAggregateStore({ url: redis.url, prefix: `dig${prefixes++}` });
    stores.push(inner);
    await pollUntil(async () => inner.ready(), Boolean);
    const store = new CountingStore(inner);
    const clock = { now: () => now, advance: (ms: number) => (now += ms) };
    const aggregator = new Aggregator(clock.now);
    const reports = new Reports(store, new CutoverStage(new CutoverControls({ ...DEFAULT_CONFIG, cutoverQuietPeriodMs: 10 * MINUTE_MS })), clock.now);
    const flush = async () => {
      const batch = aggregator.take();
      if (batch) await store.write(batch);
    };
    let n = 0;
    /** Requests and task lifecycles on every wire at `at`; some tasks end, some are left to expire. */
    const record = (at: number, count: number) => {
      for (let i = 0; i < count; i++, n++) {
        const wire = OBSERVED_WIRES[n % OBSERVED_WIRES.length]!;
        const tool = TOOLS[n % TOOLS.length]!;
        const event: RequestEvent = {
          wire,
          method: 'tools/call',
          tool,
          principal: `p${n % 2}`,
          clientName: `client-${n % 5}`,
          clientVersion: '1',
          outcome: n % 7 === 0 ? '-32603' : 'ok',
          latencyMs: (n % 13) * 7,
          at,
        };
        aggregator.request(event);
        if (wire === 'passthrough') continue;
        const task = { wire, tool, createdAt: at, expiresAt: at + ((n % 4) + 1) * 20 * MINUTE_MS };
        aggregator.task({ ...task, kind: 'created', at });
        if (n % 3 === 0) aggregator.task({ ...task, kind: 'completed', at: at + 30_000 });
      }
    };
    /** What the figures are when computed afresh from every raw bucket of the range. */
    const fresh = async (range: RangeName) => {
      const t = clock.now();
      const buckets = await inner.readBuckets(RANGES[range].resolution, bucketStarts(range, t));
      return figuresFromBuckets(range, t, buckets, await inner.readClients());
    };
    const served = async (range: RangeName) => {
      const { traffic, clients, tasks, latency } = await reports.overview(range);
      return { traffic, clients, tasks, latency };
    };
    return { clock, store, aggregator, reports, flush, record, fresh, served };
  }

  it('serves the same figures as a computation from the raw buckets while the range slides across an hour boundary', async () => {
    const { clock, store, flush, record, fresh, served } = await setup();
    for (let back = 30 * HOUR_MS; back >= 0; back -= 17 * MINUTE_MS) record(clock.now() - back, 3);
    await flush();
    for (const range of RANGE_NAMES) expect(await served(range)).toEqual(await fresh(range));
    // Two-minute steps from :56 to :04 of the next hour (its last hour bucket closes at :02), with new traffic in every step.
    for (let step = 0; step < 4; step++) {
      clock.advance(2 * MINUTE_MS);
      record(clock.now() - 90_000, 2);
      record(clock.now(), 2);
      await flush();
      for (const range of RANGE_NAMES) {
        const read = store.bucketsRead;
        expect(await served(range)).toEqual(await fresh(range));
        // Only the open buckets (for ranges of hours: the open hours' open minutes) and those closed since are read again.
        expect(store.bucketsRead - read).toBeLessThanOrEqual(8);
      }
    }
    // Every cached digest read again after REVALIDATE_MS: still the same figures.
    clock.advance(REVALIDATE_MS);
    for (const range of RANGE_NAMES) expect(await served(range)).toEqual(await fresh(range));
    expect((await served('24h')).tasks.byWire.some((wire) => wire.expired > 0)).toBe(true);
  });

  it('takes in a closed bucket written late, tasks that ended after their expiry included, once its digest is read again', async () => {
    const { clock, aggregator, flush, record, fresh, served } = await setup();
    const late = clock.now() - 5 * HOUR_MS;
    record(late, 8);
    await flush();
    const before = await served('24h');
    // A replica back from an outage flushes requests of that hour, and a task whose expiry was then that ended only later.
    aggregator.request({ wire: 'sep2663', method: 'ping', principal: 'p', clientName: 'late', clientVersion: '1', outcome: 'ok', latencyMs: 1, at: late });
    aggregator.task({ kind: 'created', wire: 'sep2663', tool: 'build', createdAt: late - HOUR_MS, expiresAt: late, at: late - HOUR_MS });
    aggregator.task({ kind: 'completed', wire: 'sep2663', tool: 'build', createdAt: late - HOUR_MS, expiresAt: late, at: clock.now() });
    aggregator.task({ kind: 'created', wire: 'tasks-create', tool: 'scan', createdAt: late - HOUR_MS, expiresAt: late + MINUTE_MS, at: late - HOUR_MS });
    await flush();
    // Within REVALIDATE_MS the cached digest still answers for the closed bucket.
    expect((await served('24h')).traffic.requests.total).toBe(before.traffic.requests.total);
    clock.advance(REVALIDATE_MS);
    const after = await served('24h');
    expect(after).toEqual(await fresh('24h'));
    expect(after.traffic.requests.total).toBe(before.traffic.requests.total + 1);
    const expired = (figures: typeof after, wire: string) => figures.tasks.byWire.find((w) => w.wire === wire)?.expired ?? 0;
    expect(expired(after, 'tasks-create')).toBe(expired(before, 'tasks-create') + 1);
    expect(after.clients.some((client) => client.name === 'late')).toBe(true);
  });

  it('warms the closed buckets off the request path, so that the first request reads only the open ones', async () => {
    const { clock, store, reports, flush, record, fresh, served } = await setup();
    for (let back = 7 * 24 * HOUR_MS; back >= 0; back -= 3 * HOUR_MS) record(clock.now() - back, 2);
    await flush();
    await reports.warm();
    const read = store.bucketsRead;
    expect(await served('7d')).toEqual(await fresh('7d'));
    expect(store.bucketsRead - read).toBeLessThanOrEqual(2);
  });

  it('digests a bucket into its summable counters, requests and creations by wire, and its positive expiry counters', () => {
    const d = digest(
      new Map([
        ['q|sep2663|ping|ok', 2],
        ['q|passthrough|tools/call|error', 1],
        ['k|tasks-create|build|created', 3],
        ['k|tasks-create|build|completed', 1],
        ['x|tasks-create|build', 2],
        ['x|sep2663|scan', 0],
        ['x|sep2663|build', -1],
      ]),
    );
    expect(d.requests).toEqual({ sep2663: 2, 'mcp-2025-11-25': 0, 'tasks-create': 0, passthrough: 1 });
    expect(d.taskCreations).toEqual({ sep2663: 0, 'mcp-2025-11-25': 0, 'tasks-create': 3, passthrough: 0 });
    expect([...d.expiring]).toEqual([['x|tasks-create|build', 2]]);
    expect([...d.counters.keys()].some((name) => name.startsWith('x|'))).toBe(false);
    expect(d.counters.size).toBe(4);
  });

  it('merges tallies into a new one that sums them, leaving every input as it was', () => {
    const a = new Map([
      ['c|id1|sep2663', 2],
      ['ce|id1|sep2663', 1],
      ['l|sep2663|3', 2],
      ['lt|sep2663|build|3', 1],
      ['te|sep2663|build', 1],
      ['q|sep2663|tools/call|ok', 2],
      ['k|sep2663|build|created', 2],
      ['td|sep2663|1', 1],
    ]);
    const b = new Map([
      ['c|id1|sep2663', 3],
      ['c|id1|passthrough', 1],
      ['c|id2|sep2663', 1],
      ['l|sep2663|3', 1],
      ['lt|sep2663|build|3', 1],
      ['q|sep2663|tools/call|-32603', 1],
      ['k|sep2663|build|completed', 1],
    ]);
    const [ta, tb, tx] = [tallyCounters(a), tallyCounters(b), tallyExpired(new Map([['x|sep2663|build', 1]]))];
    const before = JSON.stringify([ta, tb, tx], (_key, value) => (value instanceof Map ? [...value] : value));
    const sum = mergeTallies([ta, tb, tx]);
    expect(JSON.stringify([ta, tb, tx], (_key, value) => (value instanceof Map ? [...value] : value))).toBe(before);
    const all = new Map(a);
    for (const [name, value] of b) all.set(name, (all.get(name) ?? 0) + value);
    expect(sum).toEqual(mergeTallies([tallyCounters(all), tx]));
    expect(sum.clients.get('id1')?.get('sep2663')).toEqual({ calls: 5, errors: 1 });
    expect(sum.taskTools.get('sep2663|build')).toMatchObject({ created: 2, completed: 1, expired: 1 });
  });
});
