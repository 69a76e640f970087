import { bucketStart, HOUR_MS, MINUTE_MS, type Resolution } from './layout.js';

/** The dashboard's ranges: how many buckets of which resolution each sums, and how many buckets make one series point. */
export const RANGES = {
  '1h': { resolution: 'm', buckets: 60, step: MINUTE_MS, group: 1 },
  '24h': { resolution: 'h', buckets: 24, step: HOUR_MS, group: 1 },
  '7d': { resolution: 'h', buckets: 168, step: HOUR_MS, group: 1 },
  '30d': { resolution: 'h', buckets: 720, step: HOUR_MS, group: 6 },
} as const satisfies Record<string, { resolution: Resolution; buckets: number; step: number; group: number }>;
export type RangeName = keyof typeof RANGES;
export const RANGE_NAMES = Object.keys(RANGES) as RangeName[];

export function isRange(value: unknown): value is RangeName {
  return typeof value === 'string' && Object.hasOwn(RANGES, value);
}

/** The range's bucket starts at `now`, oldest first; the last holds `now`. */
export function bucketStarts(range: RangeName, now: number): number[] {
  const { resolution, buckets, step } = RANGES[range];
  const last = bucketStart(now, resolution);
  return Array.from({ length: buckets }, (_, i) => last - (buckets - 1 - i) * step);
}

/** Clients last seen before this are left out of the range's client table unless they made calls in it. */
export function rangeFrom(range: RangeName, now: number): number {
  return now - RANGES[range].buckets * RANGES[range].step;
}
