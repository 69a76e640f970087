import type { CutoverControls, CutoverState } from '../cutover/controls.js';
import { lastSeen, type AggregateStore, type ClientRecord, type Counters } from './aggregates.js';
import { DigestCache, type Window, type WindowSpec } from './digest-cache.js';
import { isOldWire, OBSERVED_WIRES, TASK_EVENTS, type ObservedWire } from './events.js';
import { bucketStart, HOUR_MS, LATENCY_BOUNDS_MS, MINUTE_MS, quantile, TERMINAL_BOUNDS_MS, type Resolution } from './layout.js';
import { digest, sumDigests, zeroByWire, type ByWire, type Digest, type Totals } from './report-digest.js';

export const RANGES = {
  '1h': { resolution: 'm', buckets: 60, step: MINUTE_MS, group: 1 },
  '24h': { resolution: 'h', buckets: 24, step: HOUR_MS, group: 1 },
  '7d': { resolution: 'h', buckets: 168, step: HOUR_MS, group: 1 },
  '30d': { resolution: 'h', buckets: 720, step: HOUR_MS, group: 6 },
} as const satisfies Record<string, { resolution: Resolution; buckets: number; step: number; group: number }>;
export type RangeName = keyof typeof RANGES;

export function isRange(value: unknown): value is RangeName {
  return typeof value === 'string' && Object.hasOwn(RANGES, value);
}

export interface Share {
  total: number;
  old: number;
  new: number;
  /** new / total, or null without traffic. */
  newShare: number | null;
  byWire: ByWire;
}

export interface TrafficReport {
  range: RangeName;
  from: string;
  to: string;
  /** Width of one series point, ms. */
  stepMs: number;
  requests: Share;
  taskCreations: Share;
  series: Array<{ t: string; requests: ByWire; taskCreations: ByWire }>;
}

export interface ClientRow {
  name: string;
  version: string;
  principal: string;
  /** Wires this client used in the range, old ones first. */
  wires: ObservedWire[];
  calls: number;
  oldCalls: number;
  errors: number;
  errorRate: number | null;
  firstSeenOld: string | null;
  lastSeenOld: string | null;
  firstSeenNew: string | null;
  lastSeenNew: string | null;
}

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface TaskOutcomes {
  created: number;
  completed: number;
  failed: number;
  cancelled: number;
  expired: number;
}

export interface TasksReport {
  byWire: Array<{ wire: ObservedWire } & TaskOutcomes & { timeToTerminalMs: Percentiles }>;
  byTool: Array<{ wire: ObservedWire; tool: string } & TaskOutcomes>;
}

export interface LatencyReport {
  byWire: Array<{ wire: ObservedWire; calls: number; errors: number; errorRate: number | null } & Percentiles>;
  byTool: Array<{ wire: ObservedWire; tool: string; calls: number; errors: number; errorRate: number | null } & Percentiles>;
  byMethod: Array<{ wire: ObservedWire; method: string; calls: number; errors: number }>;
}

export interface Verdict {
  /** `ready`: no old-API traffic for the quiet period. `waiting`: none seen, but not observed that long yet. `blocked`: old-API traffic within it. */
  state: 'ready' | 'waiting' | 'blocked';
  ready: boolean;
  quietPeriodMs: number;
  lastOldApiAt: string | null;
  observingSince: string | null;
  /** When the verdict turns ready if no old-API traffic comes. */
  readyAt: string | null;
  /** Clients on the old API within the quiet period, most recently seen first. */
  clients: Array<{ name: string; version: string; principal: string; lastSeenOld: string; firstSeenOld: string | null }>;
}

export interface RecordingReport {
  store: 'redis' | 'memory';
  since: string | null;
  /** Flushes that could not be written (store unreachable), fleet-wide, once written. */
  gaps: number;
  /** Events given up after a long outage. */
  dropped: number;
}

export interface Overview {
  generatedAt: string;
  traffic: TrafficReport;
  clients: ClientRow[];
  tasks: TasksReport;
  latency: LatencyReport;
  verdict: Verdict;
  cutover: CutoverState;
  recording: RecordingReport;
}

/** A dashboard polls several endpoints of one range at once: long ranges answer from one window for this long. */
const CACHE_MS = 2_000;

/** Per resolution, the most buckets any range reads: the bound of the digest cache. */
const DIGEST_LIMITS: Record<Resolution, number> = {
  m: Math.max(...Object.values(RANGES).filter((r) => r.resolution === 'm').map((r) => r.buckets)),
  h: Math.max(...Object.values(RANGES).filter((r) => r.resolution === 'h').map((r) => r.buckets)),
};

/**
 * Reads the shared aggregates into the dashboard's figures. Every figure is the fleet's (Redis)
 * or this process's (embedded store); nothing here depends on which replica answers.
 */
export class Reports {
  private readonly digests: DigestCache;
  private cache = new Map<string, { at: number; value: Promise<Window> }>();
  private warming: Promise<void> | undefined;

  constructor(
    private readonly aggregates: AggregateStore,
    private readonly controls: CutoverControls,
    private readonly now: () => number = Date.now,
  ) {
    this.digests = new DigestCache(aggregates, DIGEST_LIMITS);
  }

  async overview(range: RangeName): Promise<Overview> {
    const now = this.now();
    const [window, clients, meta] = await Promise.all([this.window(range, now), this.aggregates.readClients(), this.aggregates.readMeta()]);
    return {
      generatedAt: new Date(now).toISOString(),
      traffic: traffic(range, now, window.digests),
      clients: clientRows(window.totals.counters, clients, rangeFrom(range, now)),
      tasks: tasks(window.totals),
      latency: latency(window.totals.counters),
      verdict: verdict(clients, meta.since, this.controls.quietPeriodMs, now),
      cutover: this.controls.state(now),
      recording: {
        store: this.aggregates.kind,
        since: iso(meta.since),
        gaps: meta.gaps,
        dropped: meta.dropped,
      },
    };
  }

  async traffic(range: RangeName): Promise<TrafficReport> {
    const now = this.now();
    return traffic(range, now, (await this.window(range, now)).digests);
  }

  async clients(range: RangeName): Promise<ClientRow[]> {
    const now = this.now();
    const [window, clients] = await Promise.all([this.window(range, now), this.aggregates.readClients()]);
    return clientRows(window.totals.counters, clients, rangeFrom(range, now));
  }

  async tasks(range: RangeName): Promise<TasksReport> {
    return tasks((await this.window(range, this.now())).totals);
  }

  async latency(range: RangeName): Promise<LatencyReport> {
    return latency((await this.window(range, this.now())).totals.counters);
  }

  async verdict(): Promise<Verdict> {
    const [clients, meta] = await Promise.all([this.aggregates.readClients(), this.aggregates.readMeta()]);
    return verdict(clients, meta.since, this.controls.quietPeriodMs, this.now());
  }

  cutover(): CutoverState {
    return this.controls.state(this.now());
  }

  async recording(): Promise<RecordingReport> {
    const meta = await this.aggregates.readMeta();
    return { store: this.aggregates.kind, since: iso(meta.since), gaps: meta.gaps, dropped: meta.dropped };
  }

  /**
   * Reads every range's closed buckets into the digest cache and primes its totals, off the
   * request path; a call while one runs joins it.
   */
  warm(): Promise<void> {
    this.warming ??= this.digests
      .warm(
        (Object.keys(RANGES) as RangeName[]).map((range) => [range, windowSpec(range, this.now())]),
        this.now,
      )
      .finally(() => {
        this.warming = undefined;
      });
    return this.warming;
  }

  /** The range's bucket digests, oldest first, and their totals. */
  private window(range: RangeName, now: number): Promise<Window> {
    const spec = windowSpec(range, now);
    if (RANGES[range].buckets <= 60) return this.digests.window(range, spec, now);
    const key = `${range}:${spec.starts[0]}`;
    const hit = this.cache.get(key);
    if (hit && now - hit.at < CACHE_MS) return hit.value;
    const value = this.digests.window(range, spec, now);
    this.cache.set(key, { at: now, value });
    for (const [other, { at }] of this.cache) if (now - at >= CACHE_MS) this.cache.delete(other);
    value.catch(() => this.cache.delete(key));
    return value;
  }
}

/** The figures of a range computed afresh from its raw buckets (oldest first), without any cache. */
export function figuresFromBuckets(range: RangeName, now: number, buckets: Counters[], clients: ClientRecord[]) {
  const { step } = RANGES[range];
  const starts = bucketStarts(range, now);
  const digests = buckets.map(digest);
  const totals = sumDigests(digests, (i) => (starts[i] as number) + step <= now);
  return {
    traffic: traffic(range, now, digests),
    clients: clientRows(totals.counters, clients, rangeFrom(range, now)),
    tasks: tasks(totals),
    latency: latency(totals.counters),
  };
}

function windowSpec(range: RangeName, now: number): WindowSpec {
  const { resolution, step } = RANGES[range];
  return { resolution, step, starts: bucketStarts(range, now) };
}

function rangeFrom(range: RangeName, now: number): number {
  return now - RANGES[range].buckets * RANGES[range].step;
}

export function bucketStarts(range: RangeName, now: number): number[] {
  const { resolution, buckets, step } = RANGES[range];
  const last = bucketStart(now, resolution);
  return Array.from({ length: buckets }, (_, i) => last - (buckets - 1 - i) * step);
}

export function traffic(range: RangeName, now: number, digests: readonly Digest[]): TrafficReport {
  const { step, group } = RANGES[range];
  const starts = bucketStarts(range, now);
  const series: TrafficReport['series'] = [];
  for (let i = 0; i < digests.length; i += group) {
    const requests = zeroByWire();
    const taskCreations = zeroByWire();
    for (const d of digests.slice(i, i + group)) {
      for (const wire of Object.keys(d.requests) as ObservedWire[]) requests[wire] = (requests[wire] ?? 0) + d.requests[wire];
      for (const wire of Object.keys(d.taskCreations) as ObservedWire[]) taskCreations[wire] = (taskCreations[wire] ?? 0) + d.taskCreations[wire];
    }
    series.push({ t: new Date(starts[i] as number).toISOString(), requests, taskCreations });
  }
  const requests = zeroByWire();
  const created = zeroByWire();
  for (const point of series) {
    for (const wire of OBSERVED_WIRES) {
      requests[wire] += point.requests[wire];
      created[wire] += point.taskCreations[wire];
    }
  }
  return {
    range,
    from: new Date(starts[0] as number).toISOString(),
    to: new Date(now).toISOString(),
    stepMs: step * group,
    requests: share(requests),
    taskCreations: share(created),
    series,
  };
}

export function clientRows(total: Counters, clients: ClientRecord[], from: number): ClientRow[] {
  const calls = new Map<string, Map<ObservedWire, { calls: number; errors: number }>>();
  for (const [name, value] of total) {
    const parts = name.split('|');
    if (parts[0] !== 'c' && parts[0] !== 'ce') continue;
    const id = parts[1] as string;
    const wire = parts[2] as ObservedWire;
    let wires = calls.get(id);
    if (!wires) calls.set(id, (wires = new Map()));
    const entry = wires.get(wire) ?? { calls: 0, errors: 0 };
    if (parts[0] === 'c') entry.calls += value;
    else entry.errors += value;
    wires.set(wire, entry);
  }
  const rows: Array<ClientRow & { last: number }> = [];
  for (const client of clients) {
    const wires = calls.get(client.id);
    if (!wires && lastSeen(client) < from) continue;
    const used = [...(wires?.keys() ?? [])].sort((a, b) => OBSERVED_WIRES.indexOf(b) - OBSERVED_WIRES.indexOf(a));
    const counts = [...(wires?.entries() ?? [])];
    const callCount = counts.reduce((n, [, c]) => n + c.calls, 0);
    const errors = counts.reduce((n, [, c]) => n + c.errors, 0);
    rows.push({
      ...client.identity,
      wires: used,
      calls: callCount,
      oldCalls: counts.filter(([wire]) => isOldWire(wire)).reduce((n, [, c]) => n + c.calls, 0),
      errors,
      errorRate: callCount === 0 ? null : errors / callCount,
      firstSeenOld: iso(client.firstOld),
      lastSeenOld: iso(client.lastOld),
      firstSeenNew: iso(client.firstNew),
      lastSeenNew: iso(client.lastNew),
      last: lastSeen(client),
    });
  }
  rows.sort((a, b) => b.last - a.last || a.name.localeCompare(b.name));
  return rows.map(({ last: _last, ...row }) => row);
}

/** Task outcomes of a range; `totals.expiring` holds the expiry counters of its buckets that have passed. */
export function tasks(totals: Totals): TasksReport {
  const byWire = new Map<ObservedWire, TaskOutcomes & { ttt: number[] }>();
  const byTool = new Map<string, { wire: ObservedWire; tool: string } & TaskOutcomes>();
  const wireEntry = (wire: ObservedWire) => {
    let entry = byWire.get(wire);
    if (!entry) byWire.set(wire, (entry = { ...zeroOutcomes(), ttt: new Array(TERMINAL_BOUNDS_MS.length + 1).fill(0) }));
    return entry;
  };
  const toolEntry = (wire: ObservedWire, tool: string) => {
    const key = `${wire}|${tool}`;
    let entry = byTool.get(key);
    if (!entry) byTool.set(key, (entry = { wire, tool, ...zeroOutcomes() }));
    return entry;
  };
  for (const [name, value] of totals.counters) {
    const parts = name.split('|');
    const wire = parts[1] as ObservedWire;
    if (parts[0] === 'k') {
      const event = parts[3] as (typeof TASK_EVENTS)[number];
      if (!TASK_EVENTS.includes(event)) continue;
      wireEntry(wire)[event] += value;
      toolEntry(wire, parts[2] as string)[event] += value;
    } else if (parts[0] === 'tt') {
      const ttt = wireEntry(wire).ttt;
      ttt[Number(parts[2])] = (ttt[Number(parts[2])] ?? 0) + value;
    }
  }
  // Expired: tasks whose expiry bucket has fully passed without them ending.
  for (const [name, value] of totals.expiring) {
    const [, wire, tool] = name.split('|') as [string, ObservedWire, string];
    wireEntry(wire).expired += value;
    toolEntry(wire, tool).expired += value;
  }
  return {
    byWire: OBSERVED_WIRES.filter((wire) => byWire.has(wire)).map((wire) => {
      const { ttt, ...outcomes } = byWire.get(wire)!;
      return { wire, ...outcomes, timeToTerminalMs: percentiles(ttt, TERMINAL_BOUNDS_MS) };
    }),
    byTool: [...byTool.values()].sort((a, b) => b.created - a.created || a.tool.localeCompare(b.tool) || byWireOrder(a, b)),
  };
}

export function latency(total: Counters): LatencyReport {
  const wires = new Map<ObservedWire, number[]>();
  const tools = new Map<string, { wire: ObservedWire; tool: string; hist: number[]; errors: number }>();
  const methods = new Map<string, { wire: ObservedWire; method: string; calls: number; errors: number }>();
  const wireErrors = new Map<ObservedWire, number>();
  const histogram = () => new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
  const tool = (wire: ObservedWire, name: string) => {
    const key = `${wire}|${name}`;
    let entry = tools.get(key);
    if (!entry) tools.set(key, (entry = { wire, tool: name, hist: histogram(), errors: 0 }));
    return entry;
  };
  for (const [name, value] of total) {
    const parts = name.split('|');
    const wire = parts[1] as ObservedWire;
    switch (parts[0]) {
      case 'l': {
        let hist = wires.get(wire);
        if (!hist) wires.set(wire, (hist = histogram()));
        hist[Number(parts[2])]! += value;
        break;
      }
      case 'lt':
        tool(wire, parts[2] as string).hist[Number(parts[3])]! += value;
        break;
      case 'te':
        tool(wire, parts[2] as string).errors += value;
        break;
      case 'q': {
        const key = `${wire}|${parts[2]}`;
        const entry = methods.get(key) ?? { wire, method: parts[2] as string, calls: 0, errors: 0 };
        entry.calls += value;
        if (parts[3] !== 'ok') {
          entry.errors += value;
          wireErrors.set(wire, (wireErrors.get(wire) ?? 0) + value);
        }
        methods.set(key, entry);
        break;
      }
    }
  }
  const calls = (hist: number[]) => hist.reduce((a, b) => a + b, 0);
  return {
    byWire: OBSERVED_WIRES.filter((wire) => wires.has(wire)).map((wire) => {
      const hist = wires.get(wire)!;
      const n = calls(hist);
      const errors = wireErrors.get(wire) ?? 0;
      return { wire, calls: n, errors, errorRate: n === 0 ? null : errors / n, ...percentiles(hist, LATENCY_BOUNDS_MS) };
    }),
    byTool: [...tools.values()]
      .map(({ wire, tool: name, hist, errors }) => {
        const n = calls(hist);
        return { wire, tool: name, calls: n, errors, errorRate: n === 0 ? null : errors / n, ...percentiles(hist, LATENCY_BOUNDS_MS) };
      })
      .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool) || byWireOrder(a, b)),
    byMethod: [...methods.values()].sort((a, b) => b.calls - a.calls || a.method.localeCompare(b.method) || byWireOrder(a, b)),
  };
}

export function verdict(clients: ClientRecord[], since: number | undefined, quietPeriodMs: number, now: number): Verdict {
  const lastOld = clients.reduce<number | undefined>((max, c) => (c.lastOld !== undefined && (max === undefined || c.lastOld > max) ? c.lastOld : max), undefined);
  const horizon = now - quietPeriodMs;
  const holding = clients
    .filter((c) => c.lastOld !== undefined && c.lastOld > horizon)
    .sort((a, b) => (b.lastOld as number) - (a.lastOld as number))
    .map((c) => ({ ...c.identity, lastSeenOld: iso(c.lastOld) as string, firstSeenOld: iso(c.firstOld) }));
  const base = { quietPeriodMs, lastOldApiAt: iso(lastOld), observingSince: iso(since), clients: holding };
  if (lastOld !== undefined && lastOld > horizon) {
    return { ...base, state: 'blocked', ready: false, readyAt: iso(lastOld + quietPeriodMs) };
  }
  if (since === undefined || since > horizon) {
    return { ...base, state: 'waiting', ready: false, readyAt: iso((since ?? now) + quietPeriodMs) };
  }
  return { ...base, state: 'ready', ready: true, readyAt: null };
}

/** Ties broken by wire, so that the order never depends on which bucket a name was first summed from. */
function byWireOrder(a: { wire: ObservedWire }, b: { wire: ObservedWire }): number {
  return OBSERVED_WIRES.indexOf(a.wire) - OBSERVED_WIRES.indexOf(b.wire);
}

function share(byWire: ByWire): Share {
  const old = OBSERVED_WIRES.filter(isOldWire).reduce((n, wire) => n + byWire[wire], 0);
  const total = old + byWire.sep2663;
  return { total, old, new: byWire.sep2663, newShare: total === 0 ? null : byWire.sep2663 / total, byWire };
}

function percentiles(hist: number[], bounds: readonly number[]): Percentiles {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);
  return { p50: round(quantile(hist, bounds, 0.5)), p95: round(quantile(hist, bounds, 0.95)), p99: round(quantile(hist, bounds, 0.99)) };
}

function zeroOutcomes(): TaskOutcomes {
  return { created: 0, completed: 0, failed: 0, cancelled: 0, expired: 0 };
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
