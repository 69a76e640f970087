import type { ClientRecord, RecordingMeta } from './aggregates.js';
import type { Window } from './digest-cache.js';
import { rangeFrom, type RangeName } from './ranges.js';
import { clientRows, iso, latency, tasks, traffic, verdict, type ClientRow, type LatencyReport, type RecordingReport, type TasksReport, type TrafficReport, type Verdict } from './report-figures.js';

/**
 * A value made at most once per `maxAgeMs` (by the caller's clock) and shared by every caller
 * meanwhile, the one in flight included; `drop()` ends it early. A value that fails is not kept.
 */
export class Shared<T> {
  private current: { at: number; value: Promise<T> } | undefined;

  constructor(private readonly maxAgeMs: number) {}

  get(now: number, make: () => Promise<T>): Promise<T> {
    const current = this.current;
    if (current && now >= current.at && now - current.at < this.maxAgeMs) return current.value;
    const entry = { at: now, value: make() };
    this.current = entry;
    entry.value.catch(() => {
      if (this.current === entry) this.current = undefined;
    });
    return entry.value;
  }

  drop(): void {
    this.current = undefined;
  }
}

/** Each figure made (and serialised) once, on first use. */
class Parts<Figures extends object> {
  private readonly made = new Map<keyof Figures, unknown>();
  private readonly serialised = new Map<keyof Figures, string>();

  constructor(private readonly makers: { [K in keyof Figures]: () => Figures[K] }) {}

  get<K extends keyof Figures>(name: K): Figures[K] {
    if (!this.made.has(name)) this.made.set(name, this.makers[name]());
    return this.made.get(name) as Figures[K];
  }

  json(name: keyof Figures): string {
    let text = this.serialised.get(name);
    if (text === undefined) this.serialised.set(name, (text = JSON.stringify(this.get(name))));
    return text;
  }
}

/** The fleet's client table and recording state, read at `at`. */
export class TableSnapshot {
  readonly parts: Parts<{ verdict: Verdict; recording: RecordingReport }>;

  constructor(
    readonly at: number,
    readonly clients: readonly ClientRecord[],
    meta: RecordingMeta,
    store: RecordingReport['store'],
    quietPeriodMs: number,
  ) {
    this.parts = new Parts({
      verdict: () => verdict(clients, meta.since, quietPeriodMs, at),
      recording: () => ({ store, since: iso(meta.since), gaps: meta.gaps, dropped: meta.dropped }),
    });
  }
}

/** One range's figures at `now`, from its window of buckets; its client rows from a client table. */
export class RangeSnapshot {
  readonly parts: Parts<{ traffic: TrafficReport; tasks: TasksReport; latency: LatencyReport }>;
  private rows: { table: TableSnapshot; parts: Parts<{ clients: ClientRow[] }> } | undefined;

  constructor(
    readonly range: RangeName,
    readonly now: number,
    private readonly window: Window,
  ) {
    this.parts = new Parts({
      traffic: () => traffic(range, now, window.points),
      tasks: () => tasks(window.tally),
      latency: () => latency(window.tally),
    });
  }

  /** The client rows of this range from `table` (made again only for another table). */
  clients(table: TableSnapshot): Parts<{ clients: ClientRow[] }> {
    if (this.rows?.table !== table) {
      const { window, range, now } = this;
      this.rows = { table, parts: new Parts({ clients: () => clientRows(window.tally, table.clients, rangeFrom(range, now)) }) };
    }
    return this.rows.parts;
  }
}
