import type { AggregateStore, Counters } from './aggregates.js';
import { MINUTE_MS, type Resolution } from './layout.js';
import { addDigest, digest, emptyTotals, sameDigest, type Digest, type Totals } from './report-digest.js';
import { mergeTallies, tallyCounters, tallyExpired, type Tally } from './tally.js';

/** A bucket this long past its end is closed: flushes run every second, so only a late replica still writes to it. */
export const CLOSED_MARGIN_MS = 2 * MINUTE_MS;
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
  digests: Digest[];
  /** The range's counters parsed and summed, the expired tasks of its passed buckets included. */
  tally: Tally;
}

interface Cached {
  digest: Digest;
  at: number;
}

/** The closed buckets' digests a range's running totals hold, their sum, and that sum parsed (until it moves). */
interface Running {
  used: Map<number, Digest>;
  totals: Totals;
  tally?: Tally;
}

/**
 * Digests of closed buckets, kept in process (at most `limits[resolution]` per resolution) and
 * read again after REVALIDATE_MS; per range, the running sum of its closed digests, moved along
 * as the range slides. A request reads only the open buckets and adds them to a copy of that sum.
 */
export class DigestCache {
  private readonly cached: Record<Resolution, Map<number, Cached>> = { m: new Map(), h: new Map() };
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly store: AggregateStore,
    private readonly limits: Record<Resolution, number>,
  ) {}

  async window(key: string, spec: WindowSpec, now: number): Promise<Window> {
    const { resolution, starts, step } = spec;
    const cache = this.cached[resolution];
    const closed = (start: number) => isClosed(start, step, now);
    const known = new Map<number, Digest>();
    const reads: number[] = [];
    for (const start of starts) {
      const hit = cache.get(start);
      if (closed(start) && hit && now - hit.at < REVALIDATE_MS) known.set(start, hit.digest);
      else reads.push(start);
    }
    const read = await this.store.readBuckets(resolution, reads);
    // From here on nothing awaits: concurrent requests never see half-moved totals.
    reads.forEach((start, i) => {
      const bucket = read[i] ?? new Map();
      known.set(start, closed(start) ? this.keep(resolution, start, bucket, now) : digest(bucket));
    });
    this.evict(resolution, starts[starts.length - 1] as number, step);
    const digests = starts.map((start) => known.get(start) as Digest);
    const running = this.slide(key, starts, digests, closed);
    running.tally ??= mergeTallies([tallyCounters(running.totals.counters), tallyExpired(running.totals.expiring)]);
    const tallies = [running.tally];
    starts.forEach((start, i) => {
      if (closed(start)) return;
      const d = digests[i] as Digest;
      tallies.push(tallyCounters(d.counters));
      if (start + step <= now) tallies.push(tallyExpired(d.expiring));
    });
    return { digests, tally: mergeTallies(tallies) };
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

  /** Moves a range's running totals onto its current closed buckets: takes back those gone or changed, adds the new. */
  private slide(key: string, starts: readonly number[], digests: readonly Digest[], closed: (start: number) => boolean): Running {
    let running = this.running.get(key);
    if (!running) this.running.set(key, (running = { used: new Map(), totals: emptyTotals() }));
    const current = new Map<number, Digest>();
    starts.forEach((start, i) => {
      if (closed(start)) current.set(start, digests[i] as Digest);
    });
    for (const [start, d] of running.used) {
      if (current.get(start) === d) continue;
      addDigest(running.totals, d, -1);
      running.used.delete(start);
      running.tally = undefined;
    }
    for (const [start, d] of current) {
      if (running.used.has(start)) continue;
      addDigest(running.totals, d);
      running.used.set(start, d);
      running.tally = undefined;
    }
    return running;
  }
}

function isClosed(start: number, step: number, now: number): boolean {
  return start + step <= now - CLOSED_MARGIN_MS;
}
