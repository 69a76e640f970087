import type { Counters } from './aggregates.js';
import type { ObservedWire } from './events.js';

export type ByWire = Record<ObservedWire, number>;

/** One point of the traffic series: a bucket's requests and task creations by wire. */
export interface Point {
  requests: ByWire;
  taskCreations: ByWire;
}

/** What the report figures need from one bucket, computed once per bucket read. */
export interface Digest extends Point {
  /** Every counter but the expiry counters (`x|`): these add up across buckets. */
  counters: Counters;
  /** The bucket's positive `x|` counters: tasks that expire in it without having ended. */
  expiring: Counters;
}

/** A range's figures before rendering: summed counters and the expired tasks of its passed buckets. */
export interface Totals {
  counters: Counters;
  expiring: Counters;
}

export function digest(bucket: Counters): Digest {
  const counters: Counters = new Map();
  const expiring: Counters = new Map();
  const requests = zeroByWire();
  const taskCreations = zeroByWire();
  for (const [name, value] of bucket) {
    if (name.startsWith('x|')) {
      if (value > 0) expiring.set(name, value);
      continue;
    }
    counters.set(name, value);
    if (name.startsWith('q|')) requests[wireOf(name)] += value;
    else if (name.startsWith('k|') && name.endsWith('|created')) taskCreations[wireOf(name)] += value;
  }
  return { counters, requests, taskCreations, expiring };
}

export function emptyTotals(): Totals {
  return { counters: new Map(), expiring: new Map() };
}

/**
 * Adds (sign 1) or takes back (sign -1) a bucket's digest. A counter that falls to zero leaves the
 * totals: counters other than `x|` only ever grow, so a name is in the totals exactly when some
 * bucket of the range holds it, as in a sum computed afresh.
 */
export function addDigest(totals: Totals, d: Digest, sign: 1 | -1 = 1, withExpiring = true): void {
  addAll(totals.counters, d.counters, sign);
  if (withExpiring) addAll(totals.expiring, d.expiring, sign);
}

/** The raw computation: one bucket after the other, every bucket's expiry counters included. */
export function sumDigests(digests: readonly Digest[], expiredIn: (i: number) => boolean): Totals {
  const totals = emptyTotals();
  digests.forEach((d, i) => addDigest(totals, d, 1, expiredIn(i)));
  return totals;
}

export function sameDigest(a: Digest, b: Digest): boolean {
  return sameCounters(a.counters, b.counters) && sameCounters(a.expiring, b.expiring);
}

export function zeroByWire(): ByWire {
  return { sep2663: 0, 'mcp-2025-11-25': 0, 'tasks-create': 0, passthrough: 0 };
}

function addAll(into: Counters, from: Counters, sign: 1 | -1): void {
  for (const [name, value] of from) {
    const next = (into.get(name) ?? 0) + sign * value;
    if (next === 0) into.delete(name);
    else into.set(name, next);
  }
}

function sameCounters(a: Counters, b: Counters): boolean {
  if (a.size !== b.size) return false;
  for (const [name, value] of a) if (b.get(name) !== value) return false;
  return true;
}

function wireOf(name: string): ObservedWire {
  return name.split('|', 2)[1] as ObservedWire;
}
