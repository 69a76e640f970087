import { createHash } from 'node:crypto';
import { addTo, mergeSeen, type ClientIdentity, type ClientSeen, type Counters, type FlushBatch } from './aggregates.js';
import { isOldWire, type ObservedWire, type RequestEvent, type TaskEvent } from './events.js';
import {
  bucketIndex,
  bucketStart,
  CardinalityLimit,
  field,
  LATENCY_BOUNDS_MS,
  methodLabel,
  MINUTE_RETENTION_MS,
  OTHER,
  segment,
  TASK_DURATION_BOUNDS_MS,
  UNKNOWN,
} from './layout.js';
import { PartsCache } from './parts-cache.js';

/** While the store is unreachable, at most this many minute buckets wait in memory (about two days). */
const MAX_PENDING_MINUTES = 3_000;
const MAX_TOOLS = 200;
const MAX_CLIENTS_PER_HOUR = 1_000;
const CLIENT_ID_CACHE = 5_000;
const REQUEST_FIELD_CACHE = 5_000;
const TOOL_FIELD_CACHE = 5_000;

/** A tool's admitted name and its counter names on one wire, so that a tool call or task event allocates nothing for them. */
interface KnownTool {
  tool: string;
  latency: string[];
  error: string;
  expiring: string;
  events: Partial<Record<TaskEvent['kind'], string>>;
}

/** A client's id and identity, and its counter names per wire, so that a request allocates nothing for it. */
interface KnownClient {
  id: string;
  identity: ClientIdentity;
  fields: Partial<Record<ObservedWire, { requests: string; errors: string }>>;
}

/**
 * One replica's counts since its last successful flush, in minute buckets. Adding is a handful
 * of map increments; `take` hands the lot to the store (with its hour roll-up) and `restore`
 * puts it back when the store could not take it.
 */
export class Aggregator {
  private minutes = new Map<number, Counters>();
  private clients = new Map<string, ClientSeen>();
  private events = 0;
  private earliest: number | undefined;
  private gaps = 0;
  private dropped = 0;
  private readonly tools: CardinalityLimit;
  private readonly clientIds: CardinalityLimit;
  /** By name, version and principal: the client's id (admitted), identity and counter names. */
  private readonly ids = new PartsCache<KnownClient>(CLIENT_ID_CACHE);
  /** Request counter names by wire, method and outcome. */
  private readonly requestFields = new PartsCache<string>(REQUEST_FIELD_CACHE);
  /** By wire and tool name as the event gave it. */
  private readonly toolFields = new PartsCache<KnownTool>(TOOL_FIELD_CACHE);
  /** Latency counter names by wire, one per histogram bucket. */
  private readonly latencyFields = new Map<string, string[]>();
  private lastStart = Number.NaN;
  private lastBucket: Counters | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.tools = new CardinalityLimit(MAX_TOOLS, now);
    this.clientIds = new CardinalityLimit(MAX_CLIENTS_PER_HOUR, now);
  }

  /** Requests and task events waiting for a flush. */
  get pending(): number {
    return this.events;
  }

  request(event: RequestEvent): void {
    const at = event.at ?? this.now();
    const bucket = this.bucket(at);
    const error = event.outcome !== 'ok';
    const latency = bucketIndex(LATENCY_BOUNDS_MS, event.latencyMs);
    addTo(bucket, this.requestField(event.wire, event.method, event.outcome));
    addTo(bucket, this.latencyField(event.wire, latency));
    if (event.tool !== undefined) {
      const tool = this.tool(event.wire, event.tool);
      addTo(bucket, tool.latency[latency]!);
      if (error) addTo(bucket, tool.error);
    }
    const { id, identity, fields } = this.client(event);
    const clientFields = (fields[event.wire] ??= { requests: field.client(id, event.wire), errors: field.clientError(id, event.wire) });
    addTo(bucket, clientFields.requests);
    if (error) addTo(bucket, clientFields.errors);
    let seen = this.clients.get(id);
    if (!seen) this.clients.set(id, (seen = { identity }));
    if (isOldWire(event.wire)) {
      if (seen.firstOld === undefined || at < seen.firstOld) seen.firstOld = at;
      if (seen.lastOld === undefined || at > seen.lastOld) seen.lastOld = at;
    } else {
      if (seen.firstNew === undefined || at < seen.firstNew) seen.firstNew = at;
      if (seen.lastNew === undefined || at > seen.lastNew) seen.lastNew = at;
    }
    this.counted(at);
  }

  task(event: TaskEvent): void {
    const tool = this.tool(event.wire, event.tool);
    addTo(this.bucket(event.at), (tool.events[event.kind] ??= field.task(event.wire, tool.tool, event.kind)));
    // A task counts as expired in its expiry bucket unless it ended before: +1 at creation, -1 at its end.
    addTo(this.bucket(event.expiresAt), tool.expiring, event.kind === 'created' ? 1 : -1);
    if (event.kind !== 'created') {
      addTo(this.bucket(event.at), field.timeToTerminal(event.wire, bucketIndex(TASK_DURATION_BOUNDS_MS, event.at - event.createdAt)));
    }
    this.counted(event.at);
  }

  /** A flush that failed: counted, and written with the next batch that succeeds. */
  gap(): void {
    this.gaps++;
  }

  /** Everything counted so far, with hour buckets rolled up from the minutes; the aggregator starts empty. */
  take(): FlushBatch | undefined {
    if (this.events === 0 && this.gaps === 0 && this.dropped === 0 && this.clients.size === 0) return undefined;
    const hours = new Map<number, Counters>();
    for (const [start, counters] of this.minutes) {
      const hourStart = bucketStart(start, 'h');
      let hour = hours.get(hourStart);
      if (!hour) hours.set(hourStart, (hour = new Map()));
      for (const [name, value] of counters) addTo(hour, name, value);
    }
    const now = this.now();
    const batch: FlushBatch = {
      minutes: this.minutes,
      hours,
      clients: this.clients,
      gaps: this.gaps,
      dropped: this.dropped,
      events: this.events,
      since: Math.min(this.earliest ?? now, now),
      now,
    };
    this.minutes = new Map();
    this.lastBucket = undefined;
    this.lastStart = Number.NaN;
    this.clients = new Map();
    this.events = 0;
    this.earliest = undefined;
    this.gaps = 0;
    this.dropped = 0;
    return batch;
  }

  /** Puts a batch the store refused back, so that nothing counted is lost; bounded while the outage lasts. */
  restore(batch: FlushBatch): void {
    for (const [start, counters] of batch.minutes) {
      const bucket = this.minutes.get(start);
      if (!bucket) {
        this.minutes.set(start, counters);
        continue;
      }
      for (const [name, value] of counters) addTo(bucket, name, value);
    }
    for (const [id, seen] of batch.clients) this.seen(id, seen);
    this.events += batch.events;
    this.earliest = Math.min(this.earliest ?? batch.since, batch.since);
    this.gaps += batch.gaps;
    this.dropped += batch.dropped;
    this.bound();
  }

  private counted(at: number): void {
    this.events++;
    if (this.earliest === undefined || at < this.earliest) this.earliest = at;
  }

  private bucket(at: number): Counters {
    const start = bucketStart(at, 'm');
    if (start === this.lastStart && this.lastBucket) return this.lastBucket;
    let bucket = this.minutes.get(start);
    if (!bucket) {
      bucket = new Map();
      this.minutes.set(start, bucket);
    }
    this.lastStart = start;
    this.lastBucket = bucket;
    return bucket;
  }

  private seen(id: string, sighting: ClientSeen): void {
    const known = this.clients.get(id);
    if (known) mergeSeen(known, sighting);
    else this.clients.set(id, { ...sighting });
  }

  /** Drops the oldest minutes (and those past retention) beyond the bound, counting what they held. */
  trim(): void {
    this.bound();
  }

  private bound(): void {
    const horizon = this.now() - MINUTE_RETENTION_MS;
    const starts = [...this.minutes.keys()].sort((a, b) => a - b);
    const excess = Math.max(0, starts.length - MAX_PENDING_MINUTES);
    for (let i = 0; i < starts.length; i++) {
      const start = starts[i] as number;
      if (i >= excess && start >= horizon) break;
      const counters = this.minutes.get(start) as Counters;
      let lost = 0;
      for (const [name, value] of counters) if (name.startsWith('q|') || name.startsWith('k|')) lost += value;
      this.dropped += lost;
      this.events = Math.max(0, this.events - lost);
      this.minutes.delete(start);
      if (this.lastBucket === counters) {
        this.lastBucket = undefined;
        this.lastStart = Number.NaN;
      }
    }
  }

  private requestField(wire: string, method: string, outcome: string): string {
    return this.requestFields.get(wire, method, outcome, '') ?? this.requestFields.set(wire, method, outcome, '', field.request(wire, methodLabel(method), outcome));
  }

  private latencyField(wire: string, i: number): string {
    let fields = this.latencyFields.get(wire);
    if (!fields) this.latencyFields.set(wire, (fields = Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, j) => field.latency(wire, j))));
    return fields[i]!;
  }

  private tool(wire: string, name: string): KnownTool {
    const known = this.toolFields.get(wire, name, '', '');
    // The per-hour cap is checked again for a cached tool, so that a new hour starts a new count.
    if (known && this.tools.admit(known.tool) === known.tool) return known;
    const tool = this.tools.admit(segment(name));
    const entry: KnownTool = {
      tool,
      latency: Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, i) => field.toolLatency(wire, tool, i)),
      error: field.toolError(wire, tool),
      expiring: field.expiring(wire, tool),
      events: {},
    };
    if (tool !== OTHER) this.toolFields.set(wire, name, '', '', entry);
    return entry;
  }

  private client(event: RequestEvent): KnownClient {
    const name = event.clientName ?? UNKNOWN;
    const version = event.clientVersion ?? UNKNOWN;
    const known = this.ids.get(name, version, event.principal, '');
    // The per-hour cap is checked again for a cached id, so that a new hour starts a new count.
    if (known && this.clientIds.admit(known.id) === known.id) return known;
    const identity: ClientIdentity = {
      name: (event.clientName ?? UNKNOWN).slice(0, 200),
      version: (event.clientVersion ?? UNKNOWN).slice(0, 100),
      principal: event.principal.slice(0, 200),
    };
    const hashed = createHash('sha256').update(`${identity.name}\u0000${identity.version}\u0000${identity.principal}`).digest('hex').slice(0, 16);
    const id = this.clientIds.admit(hashed);
    const entry: KnownClient = id === OTHER ? { id, identity: { name: OTHER, version: '', principal: '' }, fields: {} } : { id, identity, fields: {} };
    if (id !== OTHER) this.ids.set(name, version, event.principal, '', entry);
    return entry;
  }
}
