import { describe, expect, it } from 'vitest';
import { CutoverControls } from '../../src/cutover/controls.js';
import { CutoverStage } from '../../src/cutover/stage.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { Aggregator } from '../../src/observe/aggregator.js';
import type { RequestEvent } from '../../src/observe/events.js';
import { bucketIndex, CardinalityLimit, HOUR_MS, LATENCY_BOUNDS_MS, MINUTE_MS, quantile, segment } from '../../src/observe/layout.js';
import { MemoryAggregateStore } from '../../src/observe/memory-aggregates.js';
import { Reports } from '../../src/observe/report.js';
import { verdict } from '../../src/observe/report-figures.js';

const T0 = Date.parse('2026-03-10T12:00:00Z');

function clock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) };
}

function request(overrides: Partial<RequestEvent> = {}): RequestEvent {
  return { wire: 'sep2663', method: 'ping', principal: 'p', clientName: 'c', clientVersion: '1', outcome: 'ok', latencyMs: 3, ...overrides };
}

describe('histograms and percentiles', () => {
  it('puts a value in the first bucket whose bound holds it, the overflow bucket past the last', () => {
    expect(bucketIndex(LATENCY_BOUNDS_MS, 0.2)).toBe(0);
    expect(bucketIndex(LATENCY_BOUNDS_MS, 1)).toBe(0);
    expect(bucketIndex(LATENCY_BOUNDS_MS, 1.1)).toBe(1);
    expect(bucketIndex(LATENCY_BOUNDS_MS, 100_000)).toBe(LATENCY_BOUNDS_MS.length);
  });

  it('interpolates quantiles inside a bucket as histogram_quantile does, and adds up across replicas', () => {
    const bounds = [10, 20, 40];
    expect(quantile([0, 0, 0, 0], bounds, 0.5)).toBeNull();
    expect(quantile([10, 0, 0, 0], bounds, 0.5)).toBe(5);
    expect(quantile([0, 10, 0, 0], bounds, 0.5)).toBe(15);
    expect(quantile([5, 5, 0, 0], bounds, 0.99)).toBeCloseTo(19.8);
    expect(quantile([0, 0, 0, 3], bounds, 0.5)).toBe(40);
    // Two replicas' histograms sum bucket by bucket; the fleet percentile is read from the sum.
    const a = [4, 0, 0, 0];
    const b = [0, 4, 0, 0];
    expect(quantile(a.map((n, i) => n + (b[i] as number)), bounds, 0.5)).toBe(10);
  });

  it('bounds client-chosen labels per hour and cleans them for field names', () => {
    const c = clock();
    const limit = new CardinalityLimit(2, c.now);
    expect([limit.admit('a'), limit.admit('b'), limit.admit('c'), limit.admit('a')]).toEqual(['a', 'b', '(other)', 'a']);
    c.advance(HOUR_MS);
    expect(limit.admit('c')).toBe('c');
    expect(segment('a|b c')).toBe('a_b_c');
    expect(segment('x'.repeat(100))).toHaveLength(80);
  });
});

describe('aggregation into reports (memory store)', () => {
  async function setup() {
    const c = clock();
    const store = new MemoryAggregateStore(c.now);
    const aggregator = new Aggregator(c.now);
    const reports = new Reports(store, new CutoverStage(new CutoverControls({ ...DEFAULT_CONFIG, cutoverQuietPeriodMs: 10 * MINUTE_MS })), c.now);
    const flush = async () => {
      const batch = aggregator.take();
      if (batch) await store.write(batch);
    };
    return { c, store, aggregator, reports, flush };
  }

  it('counts requests and task creations by wire, per minute, and shares old against new', async () => {
    const { c, aggregator, reports, flush } = await setup();
    aggregator.request(request({ at: c.now() - 30 * MINUTE_MS }));
    aggregator.request(request({ wire: 'passthrough', method: 'initialize', clientName: 'old', at: c.now() - 30 * MINUTE_MS }));
    aggregator.request(request({ wire: 'tasks-create', method: 'tasks/create', tool: 'build', clientName: 'old' }));
    aggregator.task({ kind: 'created', wire: 'tasks-create', tool: 'build', createdAt: c.now(), expiresAt: c.now() + HOUR_MS, at: c.now() });
    aggregator.task({ kind: 'created', wire: 'sep2663', tool: 'build', createdAt: c.now(), expiresAt: c.now() + HOUR_MS, at: c.now() });
    await flush();
    const traffic = await reports.traffic('1h');
    expect(traffic.requests).toEqual({ total: 3, old: 2, new: 1, newShare: 1 / 3, byWire: { sep2663: 1, 'mcp-2025-11-25': 0, 'tasks-create': 1, passthrough: 1 } });
    expect(traffic.taskCreations).toMatchObject({ total: 2, old: 1, new: 1, newShare: 0.5 });
    expect(traffic.series).toHaveLength(60);
    expect(traffic.series[29]?.requests).toMatchObject({ sep2663: 1, passthrough: 1 });
    expect(traffic.series[59]?.requests).toMatchObject({ 'tasks-create': 1 });
    expect(traffic.series[59]?.t).toBe(new Date(T0).toISOString());
    // The hour roll-up holds the same totals.
    expect((await reports.traffic('24h')).requests.total).toBe(3);
    expect((await reports.traffic('30d')).series).toHaveLength(120);
  });

  it('reports outcomes, time to terminal and expiry: a task not ended by its expiry counts once its bucket has passed', async () => {
    const { c, aggregator, reports, flush } = await setup();
    const created = c.now();
    const base = { wire: 'mcp-2025-11-25' as const, tool: 'deploy', createdAt: created };
    aggregator.task({ ...base, kind: 'created', expiresAt: created + 5 * MINUTE_MS, at: created });
    aggregator.task({ ...base, kind: 'created', expiresAt: created + 5 * MINUTE_MS, at: created });
    aggregator.task({ ...base, kind: 'created', expiresAt: created + 5 * MINUTE_MS, at: created });
    aggregator.task({ ...base, kind: 'completed', expiresAt: created + 5 * MINUTE_MS, at: created + 3_000 });
    aggregator.task({ ...base, kind: 'cancelled', expiresAt: created + 5 * MINUTE_MS, at: created + 40_000 });
    await flush();
    let tasks = await reports.tasks('1h');
    expect(tasks.byWire[0]).toMatchObject({ wire: 'mcp-2025-11-25', created: 3, completed: 1, cancelled: 1, failed: 0, expired: 0 });
    c.advance(5 * MINUTE_MS + 30_000);
    expect((await reports.tasks('1h')).byWire[0]?.expired).toBe(0);
    c.advance(MINUTE_MS);
    tasks = await reports.tasks('1h');
    expect(tasks.byWire[0]).toMatchObject({ created: 3, expired: 1 });
    expect(tasks.byTool).toEqual([{ wire: 'mcp-2025-11-25', tool: 'deploy', created: 3, completed: 1, failed: 0, cancelled: 1, expired: 1 }]);
    // 3 s and 40 s: the median is the top of the 3 s bucket, p99 inside the 40 s one (buckets 10% wide).
    expect(tasks.byWire[0]?.timeToTerminalMs.p50).toBeGreaterThanOrEqual(3_000);
    expect(tasks.byWire[0]?.timeToTerminalMs.p50).toBeLessThanOrEqual(3_300);
    expect(tasks.byWire[0]?.timeToTerminalMs.p99).toBeGreaterThan(36_000);
    expect(tasks.byWire[0]?.timeToTerminalMs.p99).toBeLessThanOrEqual(44_000);
  });

  it('reads a single 5-second task as about 5 s at p50 and p95', async () => {
    const { c, aggregator, reports, flush } = await setup();
    const created = c.now();
    const base = { wire: 'sep2663' as const, tool: 'slow', createdAt: created, expiresAt: created + HOUR_MS };
    aggregator.task({ ...base, kind: 'created', at: created });
    aggregator.task({ ...base, kind: 'completed', at: created + 5_000 });
    await flush();
    const { p50, p95 } = (await reports.tasks('1h')).byWire[0]!.timeToTerminalMs;
    for (const figure of [p50, p95]) {
      expect(figure).toBeGreaterThanOrEqual(4_500);
      expect(figure).toBeLessThanOrEqual(5_500);
    }
  });

  it('reads the percentiles of known durations within 10%', async () => {
    const { c, aggregator, reports, flush } = await setup();
    // All ended before now, so that every end is inside the range.
    const created = c.now() - 2 * MINUTE_MS;
    const base = { wire: 'sep2663' as const, tool: 'spread', createdAt: created, expiresAt: created + HOUR_MS };
    // 1 s, 2 s, … 100 s: p50 is 50 s, p95 95 s, p99 99 s.
    for (let s = 1; s <= 100; s++) aggregator.task({ ...base, kind: 'completed', at: created + s * 1_000 });
    await flush();
    const { p50, p95, p99 } = (await reports.tasks('1h')).byWire[0]!.timeToTerminalMs;
    expect(Math.abs(p50! - 50_000) / 50_000).toBeLessThanOrEqual(0.1);
    expect(Math.abs(p95! - 95_000) / 95_000).toBeLessThanOrEqual(0.1);
    expect(Math.abs(p99! - 99_000) / 99_000).toBeLessThanOrEqual(0.1);
  });

  it('builds the client table from buckets (calls, errors in range) and sightings (first/last seen)', async () => {
    const { c, aggregator, reports, flush } = await setup();
    aggregator.request(request({ wire: 'passthrough', method: 'initialize', clientName: 'old-app', clientVersion: '1.0', principal: 'team-x', at: c.now() - 20 * MINUTE_MS }));
    aggregator.request(request({ wire: 'mcp-2025-11-25', method: 'tasks/get', clientName: 'old-app', clientVersion: '1.0', principal: 'team-x', outcome: '-32602', at: c.now() - 9 * MINUTE_MS }));
    aggregator.request(request({ clientName: 'old-app', clientVersion: '1.0', principal: 'team-x', at: c.now() - 5 * MINUTE_MS }));
    aggregator.request(request({ clientName: 'new-app', clientVersion: '2.0', principal: 'team-y' }));
    await flush();
    const clients = await reports.clients('1h');
    expect(clients).toEqual([
      {
        name: 'new-app', version: '2.0', principal: 'team-y', wires: ['sep2663'], calls: 1, oldCalls: 0, errors: 0, errorRate: 0,
        firstSeenOld: null, lastSeenOld: null, firstSeenNew: new Date(T0).toISOString(), lastSeenNew: new Date(T0).toISOString(),
      },
      {
        name: 'old-app', version: '1.0', principal: 'team-x', wires: ['passthrough', 'mcp-2025-11-25', 'sep2663'], calls: 3, oldCalls: 2, errors: 1, errorRate: 1 / 3,
        firstSeenOld: new Date(T0 - 20 * MINUTE_MS).toISOString(), lastSeenOld: new Date(T0 - 9 * MINUTE_MS).toISOString(),
        firstSeenNew: new Date(T0 - 5 * MINUTE_MS).toISOString(), lastSeenNew: new Date(T0 - 5 * MINUTE_MS).toISOString(),
      },
    ]);
    const v = await reports.verdict();
    expect(v).toMatchObject({ state: 'blocked', lastOldApiAt: new Date(T0 - 9 * MINUTE_MS).toISOString(), readyAt: new Date(T0 + MINUTE_MS).toISOString() });
    expect(v.clients.map((x) => x.name)).toEqual(['old-app']);
    c.advance(MINUTE_MS);
    expect((await reports.verdict()).state).toBe('ready');
  });

  it('keeps the aggregates bounded: buckets past retention and clients beyond the cap go', async () => {
    const { c, store, aggregator, flush } = await setup();
    for (let i = 0; i < 2_100; i++) aggregator.request(request({ clientName: `client-${i}`, at: c.now() + i }));
    await flush();
    expect(await store.readClients()).toHaveLength(1_000 + 1); // 1000 admitted per hour, the rest as (other)
    c.advance(49 * HOUR_MS);
    aggregator.request(request());
    await flush();
    const [old] = await store.readBuckets('m', [T0 - (T0 % MINUTE_MS)]);
    expect(old?.size).toBe(0);
    const [hour] = await store.readBuckets('h', [T0 - (T0 % HOUR_MS)]);
    expect(hour?.size).toBeGreaterThan(0);
  });
});

describe('the verdict', () => {
  const id = (name: string, lastOld?: number) => ({ id: name, identity: { name, version: '1', principal: 'p' }, lastOld, firstOld: lastOld });

  it('waits while recording has not covered the quiet period, even without old traffic', () => {
    expect(verdict([], T0 - 1_000, 60_000, T0)).toMatchObject({ state: 'waiting', ready: false, readyAt: new Date(T0 + 59_000).toISOString() });
    expect(verdict([], undefined, 60_000, T0).state).toBe('waiting');
    expect(verdict([], T0 - 60_000, 60_000, T0)).toMatchObject({ state: 'ready', ready: true });
  });

  it('lists the clients within the quiet period, most recently seen first', () => {
    const v = verdict([id('a', T0 - 50_000), id('b', T0 - 10_000), id('c', T0 - 70_000), id('new')], T0 - 3_600_000, 60_000, T0);
    expect(v.state).toBe('blocked');
    expect(v.clients.map((c) => c.name)).toEqual(['b', 'a']);
    expect(v.readyAt).toBe(new Date(T0 + 50_000).toISOString());
  });
});
