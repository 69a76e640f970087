import {
  addTo,
  CLIENT_RETENTION_MS,
  lastSeen,
  MAX_CLIENTS,
  mergeSeen,
  type AggregateStore,
  type ClientRecord,
  type Counters,
  type FlushBatch,
  type RecordingMeta,
} from './aggregates.js';
import { HOUR_RETENTION_MS, MINUTE_RETENTION_MS, type Resolution } from './layout.js';

/** The embedded store's aggregates: the same buckets and bounds as in Redis, in this process. */
export class MemoryAggregateStore implements AggregateStore {
  readonly kind = 'memory' as const;
  private readonly buckets: Record<Resolution, Map<number, Counters>> = { m: new Map(), h: new Map() };
  private readonly clients = new Map<string, ClientRecord>();
  private readonly meta: RecordingMeta = { gaps: 0, dropped: 0 };

  constructor(private readonly now: () => number = Date.now) {}

  ready(): boolean {
    return true;
  }

  async write(batch: FlushBatch): Promise<void> {
    this.merge('m', batch.minutes);
    this.merge('h', batch.hours);
    for (const [id, seen] of batch.clients) {
      const known = this.clients.get(id);
      if (known) mergeSeen(known, seen);
      else this.clients.set(id, { id, ...seen, identity: { ...seen.identity } });
    }
    this.meta.since = Math.min(this.meta.since ?? batch.since, batch.since);
    this.meta.gaps += batch.gaps;
    this.meta.dropped += batch.dropped;
    this.prune();
  }

  async readBuckets(resolution: Resolution, starts: readonly number[]): Promise<Counters[]> {
    return starts.map((start) => new Map(this.buckets[resolution].get(start) ?? []));
  }

  async readClients(): Promise<ClientRecord[]> {
    return [...this.clients.values()].map((client) => ({ ...client, identity: { ...client.identity } }));
  }

  async readMeta(): Promise<RecordingMeta> {
    return { ...this.meta };
  }

  async close(): Promise<void> {}

  private merge(resolution: Resolution, from: Map<number, Counters>): void {
    const into = this.buckets[resolution];
    for (const [start, counters] of from) {
      let bucket = into.get(start);
      if (!bucket) into.set(start, (bucket = new Map()));
      for (const [name, value] of counters) addTo(bucket, name, value);
    }
  }

  private prune(): void {
    const now = this.now();
    for (const [resolution, retention] of [
      ['m', MINUTE_RETENTION_MS],
      ['h', HOUR_RETENTION_MS],
    ] as const) {
      for (const start of this.buckets[resolution].keys()) if (start + retention <= now) this.buckets[resolution].delete(start);
    }
    const horizon = now - CLIENT_RETENTION_MS;
    for (const [id, client] of this.clients) if (lastSeen(client) < horizon) this.clients.delete(id);
    if (this.clients.size > MAX_CLIENTS) {
      const oldest = [...this.clients.values()].sort((a, b) => lastSeen(a) - lastSeen(b));
      for (const client of oldest.slice(0, this.clients.size - MAX_CLIENTS)) this.clients.delete(client.id);
    }
  }
}
