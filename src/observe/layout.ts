/**
 * The shape of the shared aggregates: time buckets (minute and hour), the fields inside a bucket,
 * and the fixed histogram bounds that make percentiles add up across replicas.
 *
 * A bucket is a hash of counters. Field names are `|`-separated; values that come from clients
 * (tool names) are cleaned of `|` before they get here.
 *
 *   q|<wire>|<method>|<outcome>     requests
 *   l|<wire>|<i>                    request latency histogram, per wire (bucket i of LATENCY_BOUNDS_MS)
 *   lt|<wire>|<tool>|<i>            request latency histogram, per tool call
 *   te|<wire>|<tool>                tool calls that ended in an error
 *   c|<client>|<wire>               requests per client id
 *   ce|<client>|<wire>              of which errors
 *   k|<wire>|<tool>|<event>         task lifecycle events (created, completed, failed, cancelled)
 *   x|<wire>|<tool>                 tasks that expire in this bucket, less those that ended before
 *   td|<wire>|<i>                   time to terminal histogram (bucket i of TASK_DURATION_BOUNDS_MS)
 *
 * `tt|<wire>|<i>` fields, counted against the coarse TERMINAL_BOUNDS_MS, may still be in buckets
 * written before `td|` existed; nothing reads them (their indexes mean other bounds), and they
 * expire with their buckets.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** Minute buckets live this long after their minute; hour buckets this long after their hour. */
export const MINUTE_RETENTION_MS = 48 * HOUR_MS;
export const HOUR_RETENTION_MS = 35 * 24 * HOUR_MS;

export type Resolution = 'm' | 'h';

export function bucketStart(at: number, resolution: Resolution): number {
  const unit = resolution === 'm' ? MINUTE_MS : HOUR_MS;
  return Math.floor(at / unit) * unit;
}

/** Upper bounds (ms) of the request latency buckets; one more bucket holds everything above. */
export const LATENCY_BOUNDS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;
/** Upper bounds (ms) of the Prometheus time-to-terminal histogram (few buckets: every one is a series). */
export const TERMINAL_BOUNDS_MS = [
  1_000, 5_000, 15_000, 30_000, 60_000, 5 * 60_000, 15 * 60_000, HOUR_MS, 6 * HOUR_MS, 24 * HOUR_MS,
] as const;

/**
 * Upper bounds (ms) of the dashboard's time-to-terminal buckets: 10% apart from 100 ms to a day
 * (144 bounds), so that a percentile interpolated inside its bucket is within 10% of the real
 * duration; with the Prometheus bounds a single 5-second task read 10 s (p50) and 14.5 s (p95).
 * A bucket hash stores only the fields that were hit.
 */
export const TASK_DURATION_BOUNDS_MS: readonly number[] = geometricBounds(100, 1.1, 24 * HOUR_MS);

function geometricBounds(first: number, ratio: number, last: number): number[] {
  const bounds: number[] = [];
  for (let bound = first; bound < last; bound *= ratio) bounds.push(Math.round(bound));
  bounds.push(last);
  return bounds;
}

export function bucketIndex(bounds: readonly number[], value: number): number {
  for (let i = 0; i < bounds.length; i++) if (value <= (bounds[i] as number)) return i;
  return bounds.length;
}

/**
 * The q-quantile of a histogram, interpolated linearly inside its bucket as Prometheus's
 * `histogram_quantile` does. Values in the overflow bucket read as the last bound. Null when empty.
 */
export function quantile(counts: readonly number[], bounds: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i] as number;
    if (count > 0 && seen + count >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1] as number;
      const lower = i === 0 ? 0 : (bounds[i - 1] as number);
      const upper = bounds[i] as number;
      return lower + (upper - lower) * ((rank - seen) / count);
    }
    seen += count;
  }
  return bounds[bounds.length - 1] as number;
}

/** A value from a client made safe as one segment of a field name, and short. */
export function segment(value: string, max = 80): string {
  const clean = value.replace(/[|\s]/g, '_');
  return clean.length > max ? clean.slice(0, max) : clean;
}

export const field = {
  request: (wire: string, method: string, outcome: string) => `q|${wire}|${method}|${outcome}`,
  latency: (wire: string, i: number) => `l|${wire}|${i}`,
  toolLatency: (wire: string, tool: string, i: number) => `lt|${wire}|${tool}|${i}`,
  toolError: (wire: string, tool: string) => `te|${wire}|${tool}`,
  client: (client: string, wire: string) => `c|${client}|${wire}`,
  clientError: (client: string, wire: string) => `ce|${client}|${wire}`,
  task: (wire: string, tool: string, event: string) => `k|${wire}|${tool}|${event}`,
  expiring: (wire: string, tool: string) => `x|${wire}|${tool}`,
  timeToTerminal: (wire: string, i: number) => `td|${wire}|${i}`,
};

/** Methods counted under their own name; anything else a client sends counts as `other`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'tasks/create',
  'tasks/status',
  'subscriptions/listen',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'GET',
  'DELETE',
  'response',
]);

export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

/**
 * Caps how many distinct values of a client-chosen label (tool names, client ids) one replica
 * records per hour; the rest count under `(other)`. Bounds every bucket whatever the traffic.
 */
export class CardinalityLimit {
  private seen = new Set<string>();
  private resetAt = 0;

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  admit(value: string): string {
    const now = this.now();
    if (now >= this.resetAt) {
      this.seen = new Set();
      this.resetAt = now + HOUR_MS;
    }
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(value);
    return value;
  }
}

export const OTHER = '(other)';
export const UNKNOWN = '(unknown)';
