import { Counter, Gauge, type Registry } from 'prom-client';
import { WIRES } from '../core/task.js';
import type { OpenKind } from '../store/task-store.js';
import { OPEN_KINDS, type LimitUsage } from './limit-usage.js';
import type { StuckTasks } from './stuck-tasks.js';

export interface AlertSeriesOptions {
  /** The readiness checks of /readyz by name (`store`, `upstream`), asked at scrape time. */
  readiness: Record<string, () => Promise<boolean>>;
  /** The configured per-principal limits; 0: none. */
  limits: Record<OpenKind, number>;
  usage: LimitUsage;
  stuck: StuckTasks;
  /** New streams refused so far for the replica's unsent-bytes total (src/http/stream-budget.ts). */
  refusedStreams: () => number;
  /** The configured `Sunset` of the old API (epoch ms), read at scrape time (a reload may change it). */
  sunset: () => number | undefined;
}

/** A dependency that has not answered within this long reads as down: a scrape must not wait on it. */
const CHECK_TIMEOUT_MS = 2_000;

/**
 * The series the shipped alerting rules read (prometheus/, docs/operations.md, "Alerts")
 * that the traffic series do not give: whether the store and the upstream answer, the limits and
 * how full the fullest principal is, stream refusals, the old API's sunset, and tasks stuck at
 * their TTL.
 */
export function registerAlertSeries(registry: Registry, options: AlertSeriesOptions): void {
  const registers = [registry];
  const checks = Object.entries(options.readiness);
  new Gauge({
    name: 'mcp_shim_dependency_up',
    help: `1 when the dependency answered this replica's readiness check at scrape time (within ${CHECK_TIMEOUT_MS / 1000} s), else 0`,
    labelNames: ['dependency'],
    registers,
    async collect() {
      const answers = await Promise.all(checks.map(([, check]) => answered(check)));
      checks.forEach(([name], i) => this.labels(name).set(answers[i] ? 1 : 0));
    },
  });
  new Gauge({
    name: 'mcp_shim_principal_limit',
    help: 'What one principal may hold open at once, fleet-wide, by kind (tasks, streams, legacy sessions); 0: no limit',
    labelNames: ['kind'],
    registers,
    collect() {
      for (const kind of OPEN_KINDS) this.labels(kind).set(options.limits[kind]);
    },
  });
  new Gauge({
    name: 'mcp_shim_principal_open_max',
    help: "The most one principal held open, fleet-wide, as the store answered this replica's admissions and renewals in the last minute; 0 when none, or when the kind has no limit",
    labelNames: ['kind'],
    registers,
    collect() {
      for (const kind of OPEN_KINDS) this.labels(kind).set(options.usage.highest(kind));
    },
  });
  new Counter({
    name: 'mcp_shim_stream_refusals_total',
    help: 'New SSE streams this replica refused because its streams held more unsent bytes than its total (-32012)',
    registers,
    collect() {
      this.reset();
      this.inc(options.refusedStreams());
    },
  });
  new Gauge({
    name: 'mcp_shim_legacy_sunset_timestamp_seconds',
    help: 'When the old API is switched off for good (the configured Sunset, Unix seconds); 0 when none is configured',
    registers,
    collect() {
      this.set(Math.floor((options.sunset() ?? 0) / 1000));
    },
  });
  new Counter({
    name: 'mcp_shim_tasks_stuck_total',
    help: 'Tasks created on this replica that were still not terminal shortly before their TTL ended, by the wire that created them',
    labelNames: ['wire'],
    registers,
    collect() {
      const counts = options.stuck.counts();
      this.reset();
      for (const wire of WIRES) this.labels(wire).inc(counts.get(wire) ?? 0);
    },
  });
}

async function answered(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)));
  try {
    return await Promise.race([check().catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
