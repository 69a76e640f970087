import type { Resolution } from './layout.js';

/** Who a client is on the dashboard: its `clientInfo` and the principal it authenticated as. */
export interface ClientIdentity {
  name: string;
  version: string;
  principal: string;
}

/** When a client was first and last seen on each side of the cutover, in one flush (or overall). */
export interface ClientSeen {
  identity: ClientIdentity;
  firstOld?: number;
  lastOld?: number;
  firstNew?: number;
  lastNew?: number;
}

export interface ClientRecord extends ClientSeen {
  id: string;
}

export type Counters = Map<string, number>;

/** One flush of one replica: counter increments per bucket, client sightings, and its gaps. */
export interface FlushBatch {
  minutes: Map<number, Counters>;
  hours: Map<number, Counters>;
  clients: Map<string, ClientSeen>;
  /** Flushes that failed since the last one that succeeded. */
  gaps: number;
  /** Events given up while the store was unreachable for too long. */
  dropped: number;
  /** Requests and task events in this batch. */
  events: number;
  /** The earliest event in the batch (else `now`): recording has covered the time since. */
  since: number;
  now: number;
}

export interface RecordingMeta {
  /** The earliest event ever written: the verdict cannot claim a quiet period longer than the time since. */
  since?: number;
  gaps: number;
  dropped: number;
}

/**
 * Where the fleet's aggregates live: Redis (shared by every replica) or this process's memory
 * (the embedded store). Both keep minute buckets ~48 h, hour buckets ~35 days and at most
 * MAX_CLIENTS clients, so their size is bounded whatever the traffic.
 */
export interface AggregateStore {
  readonly kind: 'redis' | 'memory';
  /** Applies a batch atomically; rejects when nothing was applied. */
  write(batch: FlushBatch): Promise<void>;
  /** True once the store has been reachable; a flush before that is not a gap. */
  ready(): boolean;
  readBuckets(resolution: Resolution, starts: readonly number[]): Promise<Counters[]>;
  readClients(): Promise<ClientRecord[]>;
  readMeta(): Promise<RecordingMeta>;
  close(): Promise<void>;
}

export const MAX_CLIENTS = 2_000;
/** Clients not seen for this long leave the table. */
export const CLIENT_RETENTION_MS = 35 * 24 * 60 * 60 * 1000;

export function addTo(counters: Counters, name: string, by = 1): void {
  counters.set(name, (counters.get(name) ?? 0) + by);
}

export function mergeSeen(into: ClientSeen, from: ClientSeen): void {
  into.firstOld = minOf(into.firstOld, from.firstOld);
  into.lastOld = maxOf(into.lastOld, from.lastOld);
  into.firstNew = minOf(into.firstNew, from.firstNew);
  into.lastNew = maxOf(into.lastNew, from.lastNew);
}

export function lastSeen(seen: ClientSeen): number {
  return Math.max(seen.lastOld ?? 0, seen.lastNew ?? 0);
}

function minOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}
