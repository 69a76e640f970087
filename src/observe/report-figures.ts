import type { CutoverState } from '../cutover/controls.js';
import { lastSeen, type ClientIdentity, type ClientRecord } from './aggregates.js';
import { isOldWire, OBSERVED_WIRES, type ObservedWire } from './events.js';
import { LATENCY_BOUNDS_MS, quantile, TASK_DURATION_BOUNDS_MS } from './layout.js';
import { bucketStarts, RANGES, type RangeName } from './ranges.js';
import { zeroByWire, type ByWire, type Point } from './report-digest.js';
import type { Tally, TaskOutcomes } from './tally.js';

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

export function traffic(range: RangeName, now: number, points: readonly Point[]): TrafficReport {
  const { step, group } = RANGES[range];
  const starts = bucketStarts(range, now);
  const series: TrafficReport['series'] = [];
  for (let i = 0; i < points.length; i += group) {
    const requests = zeroByWire();
    const taskCreations = zeroByWire();
    for (const d of points.slice(i, i + group)) {
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

/** One row per client with calls in the range or seen since `from`, most recently seen first. */
export function clientRows(tally: Tally, clients: readonly ClientRecord[], from: number): ClientRow[] {
  const rows: Array<{ row: ClientRow; last: number }> = [];
  for (const client of clients) {
    const wires = tally.clients.get(client.id);
    const last = lastSeen(client);
    if (!wires && last < from) continue;
    let calls = 0;
    let oldCalls = 0;
    let errors = 0;
    const used: ObservedWire[] = [];
    // Old wires first: the reverse of OBSERVED_WIRES.
    for (let i = OBSERVED_WIRES.length - 1; i >= 0; i--) {
      const wire = OBSERVED_WIRES[i] as ObservedWire;
      const count = wires?.get(wire);
      if (!count) continue;
      used.push(wire);
      calls += count.calls;
      errors += count.errors;
      if (isOldWire(wire)) oldCalls += count.calls;
    }
    // Named fields, not a spread of the identity: spreading before more fields costs microseconds per row.
    const row: ClientRow = {
      name: client.identity.name,
      version: client.identity.version,
      principal: client.identity.principal,
      wires: used,
      calls,
      oldCalls,
      errors,
      errorRate: calls === 0 ? null : errors / calls,
      firstSeenOld: iso(client.firstOld),
      lastSeenOld: iso(client.lastOld),
      firstSeenNew: iso(client.firstNew),
      lastSeenNew: iso(client.lastNew),
    };
    rows.push({ row, last });
  }
  rows.sort((a, b) => b.last - a.last || byIdentity(a.row, b.row));
  return rows.map(({ row }) => row);
}

/** Task outcomes of a range; its tally holds the expired tasks of its buckets that have passed. */
export function tasks(tally: Tally): TasksReport {
  return {
    byWire: OBSERVED_WIRES.filter((wire) => tally.taskWires.has(wire)).map((wire) => {
      const { ttt, ...outcomes } = tally.taskWires.get(wire)!;
      return { wire, ...outcomes, timeToTerminalMs: percentiles(ttt, TASK_DURATION_BOUNDS_MS) };
    }),
    byTool: [...tally.taskTools.values()]
      .map((entry) => ({ ...entry }))
      .sort((a, b) => b.created - a.created || a.tool.localeCompare(b.tool) || byWireOrder(a, b)),
  };
}

export function latency(tally: Tally): LatencyReport {
  const wireErrors = new Map<ObservedWire, number>();
  for (const { wire, errors } of tally.methods.values()) if (errors > 0) wireErrors.set(wire, (wireErrors.get(wire) ?? 0) + errors);
  const calls = (hist: number[]) => hist.reduce((a, b) => a + b, 0);
  return {
    byWire: OBSERVED_WIRES.filter((wire) => tally.wireLatency.has(wire)).map((wire) => {
      const hist = tally.wireLatency.get(wire)!;
      const n = calls(hist);
      const errors = wireErrors.get(wire) ?? 0;
      return { wire, calls: n, errors, errorRate: n === 0 ? null : errors / n, ...percentiles(hist, LATENCY_BOUNDS_MS) };
    }),
    byTool: [...tally.tools.values()]
      .map(({ wire, tool: name, hist, errors }) => {
        const n = calls(hist);
        return { wire, tool: name, calls: n, errors, errorRate: n === 0 ? null : errors / n, ...percentiles(hist, LATENCY_BOUNDS_MS) };
      })
      .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool) || byWireOrder(a, b)),
    byMethod: [...tally.methods.values()]
      .map((entry) => ({ ...entry }))
      .sort((a, b) => b.calls - a.calls || a.method.localeCompare(b.method) || byWireOrder(a, b)),
  };
}

export function verdict(clients: readonly ClientRecord[], since: number | undefined, quietPeriodMs: number, now: number): Verdict {
  const lastOld = clients.reduce<number | undefined>((max, c) => (c.lastOld !== undefined && (max === undefined || c.lastOld > max) ? c.lastOld : max), undefined);
  const horizon = now - quietPeriodMs;
  const holding = clients
    .filter((c) => c.lastOld !== undefined && c.lastOld > horizon)
    .sort((a, b) => (b.lastOld as number) - (a.lastOld as number) || byIdentity(a.identity, b.identity))
    .map((c) => ({ name: c.identity.name, version: c.identity.version, principal: c.identity.principal, lastSeenOld: iso(c.lastOld) as string, firstSeenOld: iso(c.firstOld) }));
  const base = { quietPeriodMs, lastOldApiAt: iso(lastOld), observingSince: iso(since), clients: holding };
  if (lastOld !== undefined && lastOld > horizon) {
    return { ...base, state: 'blocked', ready: false, readyAt: iso(lastOld + quietPeriodMs) };
  }
  if (since === undefined || since > horizon) {
    return { ...base, state: 'waiting', ready: false, readyAt: iso((since ?? now) + quietPeriodMs) };
  }
  return { ...base, state: 'ready', ready: true, readyAt: null };
}

/** Client sightings repeat from one read of the table to the next: their ISO strings are kept (a few thousand at most). */
const ISO_KEPT = 20_000;
const isoStrings = new Map<number, string>();

export function iso(ms: number | undefined): string | null {
  if (ms === undefined) return null;
  let text = isoStrings.get(ms);
  if (text === undefined) {
    if (isoStrings.size >= ISO_KEPT) isoStrings.clear();
    isoStrings.set(ms, (text = new Date(ms).toISOString()));
  }
  return text;
}

/** Ties of clients broken by who they are, so that the order never depends on the order the table was read in. */
function byIdentity(a: ClientIdentity, b: ClientIdentity): number {
  return a.name.localeCompare(b.name) || a.version.localeCompare(b.version) || a.principal.localeCompare(b.principal);
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
