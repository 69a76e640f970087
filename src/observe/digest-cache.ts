import type { AggregateStore, Counters } from './aggregates.js';
import { bucketStart, HOUR_MS, MINUTE_MS, type Resolution } from './layout.js';
import { addDigest, digest, emptyTotals, sameDigest, zeroByWire, type Digest, type Point, type Totals } from './report-digest.js';
import { mergeTallies, tallyCounters, tallyExpired, type Tally } from './tally.js';

/** A bucket this long past its end is closed: flushes run every second, so only a late replica still writes to it. */
const CLOSED_MARGIN_MS = 2 * MINUTE_MS;
/** A replica cut off from the store flushes old minutes late: a closed bucket's digest is read again after this. */
export const REVALIDATE_MS = 10 * MINUTE_MS;
/** The background warm-up reads digests again from this age, so that requests rarely meet one due. */
const REFRESH_MS = REVALIDATE_MS / 2;
/** At most this share of the cached digests is read again per warm-up pass, so that the passes spread the work. */
const REFRESH_SHARE = 4;
/** Buckets per read while warming: each chunk parses a few thousand fields, then requests get their turn. */
const WARM_CHUNK = 4;

export interface WindowSpec {
  resolution: Resolution;
  /** The range's bucket starts, oldest first. */
  starts: readonly number[];
  step: number;
}

export interface Window {
  /** Requests and task creations of each bucket, oldest first. */
  points: Point[];
  /** The range's counters parsed and summed, the expired tasks of its passed buckets included. */
  tally: Tally;
}

interface Cached {
  digest: Digest;
  at: number;
}

/** Closed buckets' digests and their sum: a range's closed buckets, or an open hour's closed minutes. Parsed until it moves. */
interface Running {
  used: Map<number, Digest>;
  totals: Totals;
  counters?: Tally;
  expired?: Tally;
}

/**
 * Digests of closed buckets, kept in process (at most `limits[resolution]` per resolution) and
 * read again after REVALIDATE_MS; per range, the running sum of its closed digests, moved along
 * as the range slides. A request reads only the open buckets and adds them to that sum.
 *
 * An hour bucket is the sum of its minutes (the recorder rolls each flush up into both), so a
 * range of hours takes its open hours from their minutes: the closed ones are digested already
 * and summed as they close, and only the last few minutes are read, instead of an hour bucket of
 * a few thousand fields on every request. Minutes more than CLOSED_MARGIN_MS ahead of this clock
 * are not read (only a replica whose clock is that far ahead writes there); their hour takes them
 * in once it closes and is read whole.
 */
export class DigestCache {
  private readonly cached: Record<Resolution, Map<number, Cached>> = { m: new Map(), h: new Map() };
  private readonly running = new Map<string, Running>();
  private readonly openHours = new Map<number, Running>();

  constructor(
    private readonly store: AggregateStore,
    private readonly limits: Record<Resolution, number>,
  ) {}

  async window(key: string, spec: WindowSpec, now: number): Promise<Window> {
    const { resolution, starts, step } = spec;
    const closed = (start: number) => isClosed(start, step, now);
    const fromMinutes = resolution === 'h';
    const open = starts.filter((start) => !closed(start));
    const [buckets, minutes] = await Promise.all([
      this.digests(resolution, fromMinutes ? starts.filter(closed) : starts, step, now),
      this.digests('m', fromMinutes ? open.flatMap((hour) => minutesOf(hour, now)) : [], MINUTE_MS, now),
    ]);
    // From here on nothing awaits: concurrent requests never see half-moved totals.
    const running = this.slide(this.runningOf(key), new Map(starts.filter(closed).map((start) => [start, buckets.get(start) as Digest])));
    running.counters ??= mergeTallies([tallyCounters(running.totals.counters), tallyExpired(running.totals.expiring)]);
    const points: Point[] = [];
    const tallies = [running.counters];
    for (const start of starts) {
      const passed = start + step <= now;
      if (closed(start)) {
        points.push(buckets.get(start) as Digest);
      } else if (fromMinutes) {
        const hour = this.openHour(start, minutes, now, passed);
        points.push(hour.point);
        tallies.push(...hour.tallies);
      } else {
        const d = buckets.get(start) as Digest;
        points.push(d);
        tallies.push(...openTallies(d, passed));
      }
    }
    for (const hour of this.openHours.keys()) if (isClosed(hour, HOUR_MS, now)) this.openHours.delete(hour);
    return { points, tally: mergeTallies(tallies) };
  }

  /**
   * Reads the closed buckets not cached (or due soon) a chunk at a time, then primes each range's
   * running totals, so that a dashboard's first request finds them ready.
   */
  async warm(windows: ReadonlyArray<[string, WindowSpec]>, now: () => number): Promise<void> {
    const seen = new Set<string>();
    for (const [, { resolution, starts, step }] of windows) {
      const cache = this.cached[resolution];
      const missing: number[] = [];
      const stale: number[] = [];
      for (const start of starts) {
        if (seen.has(`${resolution}${start}`) || !isClosed(start, step, now())) continue;
        seen.add(`${resolution}${start}`);
        const hit = cache.get(start);
        if (!hit) missing.push(start);
        else if (now() - hit.at >= REFRESH_MS) stale.push(start);
      }
      stale.sort((a, b) => (cache.get(a)?.at ?? 0) - (cache.get(b)?.at ?? 0));
      const due = [...missing, ...stale.slice(0, Math.ceil(cache.size / REFRESH_SHARE))];
      for (let i = 0; i < due.length; i += WARM_CHUNK) {
        const chunk = due.slice(i, i + WARM_CHUNK);
        const read = await this.store.readBuckets(resolution, chunk);
        const at = now();
        chunk.forEach((start, j) => this.keep(resolution, start, read[j] ?? new Map(), at));
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    for (const [key, spec] of windows) await this.window(key, spec, now());
  }

  /** The digests of some buckets: closed ones from the cache (read when missing or due), open ones read. */
  private async digests(resolution: Resolution, starts: readonly number[], step: number, now: number): Promise<Map<number, Digest>> {
    const cache = this.cached[resolution];
    const known = new Map<number, Digest>();
    const reads: number[] = [];
    for (const start of starts) {
      const hit = cache.get(start);
      if (isClosed(start, step, now) && hit && now - hit.at < REVALIDATE_MS) known.set(start, hit.digest);
      else reads.push(start);
    }
    if (reads.length === 0) return known;
    const read = await this.store.readBuckets(resolution, reads);
    reads.forEach((start, i) => {
      const bucket = read[i] ?? new Map();
      known.set(start, isClosed(start, step, now) ? this.keep(resolution, start, bucket, now) : digest(bucket));
    });
    this.evict(resolution, bucketStart(now, resolution), step);
    return known;
  }

  /** An open hour from its minutes: the running sum of the closed ones, and the open ones as read. */
  private openHour(hour: number, minutes: ReadonlyMap<number, Digest>, now: number, passed: boolean): { point: Point; tallies: Tally[] } {
    const starts = minutesOf(hour, now);
    const closed = starts.filter((start) => isClosed(start, MINUTE_MS, now));
    let running = this.openHours.get(hour);
    if (!running) this.openHours.set(hour, (running = emptyRunning()));
    this.slide(running, new Map(closed.map((start) => [start, minutes.get(start) as Digest])));
    running.counters ??= tallyCounters(running.totals.counters);
    // An hour's expiry counters count once the hour has passed, as its bucket's would.
    if (passed) running.expired ??= tallyExpired(running.totals.expiring);
    const point: Point = { requests: zeroByWire(), taskCreations: zeroByWire() };
    const tallies = passed ? [running.counters, running.expired as Tally] : [running.counters];
    for (const start of starts) {
      const d = minutes.get(start) as Digest;
      addPoint(point, d);
      if (!isClosed(start, MINUTE_MS, now)) tallies.push(...openTallies(d, passed));
    }
    return { point, tallies };
  }

  /**
   * Caches a closed bucket's digest, an empty one too (a 30-day range of a week-old deployment is
   * mostly empty buckets: reading them on every request costs more than the rest); returns the
   * cached one when nothing changed, so its range totals stay.
   */
  private keep(resolution: Resolution, start: number, bucket: Counters, at: number): Digest {
    const cache = this.cached[resolution];
    const d = digest(bucket);
    const hit = cache.get(start);
    const kept = hit && sameDigest(hit.digest, d) ? hit.digest : d;
    cache.set(start, { digest: kept, at });
    return kept;
  }

  private evict(resolution: Resolution, last: number, step: number): void {
    const horizon = last - (this.limits[resolution] - 1) * step;
    const cache = this.cached[resolution];
    for (const start of cache.keys()) if (start < horizon) cache.delete(start);
  }

  private runningOf(key: string): Running {
    let running = this.running.get(key);
    if (!running) this.running.set(key, (running = emptyRunning()));
    return running;
  }

  /** Moves running totals onto the current closed digests: takes back those gone or changed, adds the new. */
  private slide(running: Running, current: ReadonlyMap<number, Digest>): Running {
    for (const [start, d] of running.used) {
      if (current.get(start) === d) continue;
      addDigest(running.totals, d, -1);
      running.used.delete(start);
      running.counters = running.expired = undefined;
    }
    for (const [start, d] of current) {
      if (running.used.has(start)) continue;
      addDigest(running.totals, d);
      running.used.set(start, d);
      running.counters = running.expired = undefined;
    }
    return running;
  }
}

function isClosed(start: number, step: number, now: number): boolean {
  return start + step <= now - CLOSED_MARGIN_MS;
}

/** The minutes of an hour up to CLOSED_MARGIN_MS ahead of `now`. */
function minutesOf(hour: number, now: number): number[] {
  const last = Math.min(hour + HOUR_MS - MINUTE_MS, bucketStart(now, 'm') + CLOSED_MARGIN_MS);
  const starts: number[] = [];
  for (let start = hour; start <= last; start += MINUTE_MS) starts.push(start);
  return starts;
}

/** An open bucket's tallies; its expiry counters only once it has passed. */
function openTallies(d: Digest, passed: boolean): Tally[] {
  return passed ? [tallyCounters(d.counters), tallyExpired(d.expiring)] : [tallyCounters(d.counters)];
}

function emptyRunning(): Running {
  return { used: new Map(), totals: emptyTotals() };
}

function addPoint(into: Point, from: Point): void {
  for (const wire of Object.keys(from.requests) as Array<keyof Point['requests']>) into.requests[wire] += from.requests[wire];
  for (const wire of Object.keys(from.taskCreations) as Array<keyof Point['taskCreations']>) into.taskCreations[wire] += from.taskCreations[wire];
}
