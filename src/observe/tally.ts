import type { Counters } from './aggregates.js';
import { TASK_EVENTS, type ObservedWire } from './events.js';
import { LATENCY_BOUNDS_MS, TASK_DURATION_BOUNDS_MS } from './layout.js';

export interface TaskOutcomes {
  created: number;
  completed: number;
  failed: number;
  cancelled: number;
  expired: number;
}

export interface CallCount {
  calls: number;
  errors: number;
}

/**
 * Counters parsed by what the report figures group them by: the field names split once, so that
 * a range's figures add a few hundred entries instead of parsing thousands of names. Every map
 * holds an entry exactly when some counter of its group is present, as a sum of the raw counters
 * does. A tally is never changed once made: merges copy what they add to.
 */
export interface Tally {
  /** client id → wire → calls (`c|`) and errors (`ce|`). */
  clients: Map<string, Map<ObservedWire, CallCount>>;
  /** Request latency histogram per wire (`l|`). */
  wireLatency: Map<ObservedWire, number[]>;
  /** `wire|tool` → latency histogram (`lt|`) and errors (`te|`). */
  tools: Map<string, { wire: ObservedWire; tool: string; hist: number[]; errors: number }>;
  /** `wire|method` → requests and those not ok (`q|`). */
  methods: Map<string, { wire: ObservedWire; method: string } & CallCount>;
  /** Task outcomes (`k|`) and time-to-terminal histogram (`td|`) per wire, expired ones from the expiry counters. */
  taskWires: Map<ObservedWire, TaskOutcomes & { ttt: number[] }>;
  /** `wire|tool` → task outcomes. */
  taskTools: Map<string, { wire: ObservedWire; tool: string } & TaskOutcomes>;
}

function emptyTally(): Tally {
  return { clients: new Map(), wireLatency: new Map(), tools: new Map(), methods: new Map(), taskWires: new Map(), taskTools: new Map() };
}

/** A bucket's (or a sum's) counters without the expiry ones, parsed. */
export function tallyCounters(counters: Counters): Tally {
  const t = emptyTally();
  for (const [name, value] of counters) {
    const parts = name.split('|');
    const wire = parts[1] as ObservedWire;
    switch (parts[0]) {
      case 'c':
      case 'ce': {
        const entry = clientEntry(t, parts[2] as string, parts[1] as string);
        if (parts[0] === 'c') entry.calls += value;
        else entry.errors += value;
        break;
      }
      case 'l': {
        const hist = wireLatency(t, wire);
        hist[Number(parts[2])]! += value;
        break;
      }
      case 'lt':
        toolEntry(t, wire, parts[2] as string).hist[Number(parts[3])]! += value;
        break;
      case 'te':
        toolEntry(t, wire, parts[2] as string).errors += value;
        break;
      case 'q': {
        const entry = methodEntry(t, wire, parts[2] as string);
        entry.calls += value;
        if (parts[3] !== 'ok') entry.errors += value;
        break;
      }
      case 'k': {
        const event = parts[3] as (typeof TASK_EVENTS)[number];
        if (!TASK_EVENTS.includes(event)) break;
        taskWire(t, wire)[event] += value;
        taskTool(t, wire, parts[2] as string)[event] += value;
        break;
      }
      case 'td': {
        const ttt = taskWire(t, wire).ttt;
        ttt[Number(parts[2])] = (ttt[Number(parts[2])] ?? 0) + value;
        break;
      }
    }
  }
  return t;
}

/** Expiry counters (`x|<wire>|<tool>`) of buckets that have passed: tasks that expired without ending. */
export function tallyExpired(expiring: Counters): Tally {
  const t = emptyTally();
  for (const [name, value] of expiring) {
    const [, wire, tool] = name.split('|') as [string, ObservedWire, string];
    taskWire(t, wire).expired += value;
    taskTool(t, wire, tool).expired += value;
  }
  return t;
}

/**
 * The sum of some tallies. The inputs stay as they are: the sum starts from shallow copies of the
 * first one's maps (a range's closed buckets, the bulk) and replaces, never changes, every entry
 * the others add to, so that a merge costs what the small ones hold.
 */
export function mergeTallies(tallies: readonly Tally[]): Tally {
  const [first, ...rest] = tallies;
  if (!first) return emptyTally();
  if (rest.length === 0) return first;
  const t: Tally = {
    clients: new Map(first.clients),
    wireLatency: new Map(first.wireLatency),
    tools: new Map(first.tools),
    methods: new Map(first.methods),
    taskWires: new Map(first.taskWires),
    taskTools: new Map(first.taskTools),
  };
  for (const from of rest) {
    for (const [client, wires] of from.clients) {
      const into = new Map(t.clients.get(client));
      for (const [wire, count] of wires) {
        const had = into.get(wire);
        into.set(wire, { calls: (had?.calls ?? 0) + count.calls, errors: (had?.errors ?? 0) + count.errors });
      }
      t.clients.set(client, into);
    }
    for (const [wire, hist] of from.wireLatency) t.wireLatency.set(wire, added(t.wireLatency.get(wire), hist));
    for (const [key, entry] of from.tools) {
      const had = t.tools.get(key);
      t.tools.set(key, { wire: entry.wire, tool: entry.tool, hist: added(had?.hist, entry.hist), errors: (had?.errors ?? 0) + entry.errors });
    }
    for (const [key, entry] of from.methods) {
      const had = t.methods.get(key);
      t.methods.set(key, { wire: entry.wire, method: entry.method, calls: (had?.calls ?? 0) + entry.calls, errors: (had?.errors ?? 0) + entry.errors });
    }
    for (const [wire, entry] of from.taskWires) {
      const had = t.taskWires.get(wire);
      t.taskWires.set(wire, { ...addedOutcomes(had, entry), ttt: added(had?.ttt, entry.ttt) });
    }
    for (const [key, entry] of from.taskTools) t.taskTools.set(key, { wire: entry.wire, tool: entry.tool, ...addedOutcomes(t.taskTools.get(key), entry) });
  }
  return t;
}

function zeroOutcomes(): TaskOutcomes {
  return { created: 0, completed: 0, failed: 0, cancelled: 0, expired: 0 };
}

function clientEntry(t: Tally, wire: string, client: string): CallCount {
  let wires = t.clients.get(client);
  if (!wires) t.clients.set(client, (wires = new Map()));
  let entry = wires.get(wire as ObservedWire);
  if (!entry) wires.set(wire as ObservedWire, (entry = { calls: 0, errors: 0 }));
  return entry;
}

function wireLatency(t: Tally, wire: ObservedWire): number[] {
  let hist = t.wireLatency.get(wire);
  if (!hist) t.wireLatency.set(wire, (hist = latencyHistogram()));
  return hist;
}

function toolEntry(t: Tally, wire: ObservedWire, tool: string) {
  const key = `${wire}|${tool}`;
  let entry = t.tools.get(key);
  if (!entry) t.tools.set(key, (entry = { wire, tool, hist: latencyHistogram(), errors: 0 }));
  return entry;
}

function methodEntry(t: Tally, wire: ObservedWire, method: string) {
  const key = `${wire}|${method}`;
  let entry = t.methods.get(key);
  if (!entry) t.methods.set(key, (entry = { wire, method, calls: 0, errors: 0 }));
  return entry;
}

function taskWire(t: Tally, wire: ObservedWire) {
  let entry = t.taskWires.get(wire);
  if (!entry) t.taskWires.set(wire, (entry = { ...zeroOutcomes(), ttt: new Array<number>(TASK_DURATION_BOUNDS_MS.length + 1).fill(0) }));
  return entry;
}

function taskTool(t: Tally, wire: ObservedWire, tool: string) {
  const key = `${wire}|${tool}`;
  let entry = t.taskTools.get(key);
  if (!entry) t.taskTools.set(key, (entry = { wire, tool, ...zeroOutcomes() }));
  return entry;
}

function latencyHistogram(): number[] {
  return new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
}

/** A new histogram: `a` (or nothing) plus `b`. */
function added(a: readonly number[] | undefined, b: readonly number[]): number[] {
  const sum = a ? [...a] : [];
  for (let i = 0; i < b.length; i++) sum[i] = (sum[i] ?? 0) + (b[i] as number);
  return sum;
}

function addedOutcomes(a: TaskOutcomes | undefined, b: TaskOutcomes): TaskOutcomes {
  return {
    created: (a?.created ?? 0) + b.created,
    completed: (a?.completed ?? 0) + b.completed,
    failed: (a?.failed ?? 0) + b.failed,
    cancelled: (a?.cancelled ?? 0) + b.cancelled,
    expired: (a?.expired ?? 0) + b.expired,
  };
}
