import type { CutoverState } from '../cutover/controls.js';
import type { CutoverStage } from '../cutover/stage.js';
import type { AggregateStore } from './aggregates.js';
import { DigestCache, type WindowSpec } from './digest-cache.js';
import { HOUR_MS, MINUTE_MS, type Resolution } from './layout.js';
import { bucketStarts, RANGE_NAMES, RANGES, type RangeName } from './ranges.js';
import type { ClientRow, LatencyReport, Overview, RecordingReport, TasksReport, TrafficReport, Verdict } from './report-figures.js';
import { RangeSnapshot, Shared, TableSnapshot } from './report-snapshot.js';

/**
 * How long one computation of a range's figures (and of the client table) answers every endpoint
 * and every request: a dashboard polls several endpoints at once, and the figures lag the
 * recording by a flush (1 s) anyway. A write of this replica's own recorder ends them at once.
 */
export const SNAPSHOT_MS = 1_000;

/**
 * Per resolution, the most buckets any range reads: the bound of the digest cache. Ranges of hours
 * read the minutes of their open hours too, the one before the current up to 62 minutes back.
 */
const DIGEST_LIMITS: Record<Resolution, number> = {
  m: Math.max(2 * (HOUR_MS / MINUTE_MS), ...Object.values(RANGES).filter((r) => r.resolution === 'm').map((r) => r.buckets)),
  h: Math.max(...Object.values(RANGES).filter((r) => r.resolution === 'h').map((r) => r.buckets)),
};

/** The JSON API's endpoints, each answered from the snapshots as text. */
export type Endpoint = 'overview' | 'traffic' | 'clients' | 'tasks' | 'latency' | 'verdict' | 'cutover' | 'recording';

/**
 * Reads the shared aggregates into the dashboard's figures. Every figure is the fleet's (Redis)
 * or this process's (embedded store); nothing here depends on which replica answers.
 */
export class Reports {
  private readonly digests: DigestCache;
  private readonly ranges = new Map<RangeName, Shared<RangeSnapshot>>(RANGE_NAMES.map((range) => [range, new Shared<RangeSnapshot>(SNAPSHOT_MS)]));
  private readonly table = new Shared<TableSnapshot>(SNAPSHOT_MS);
  private warming: Promise<void> | undefined;

  constructor(
    private readonly aggregates: AggregateStore,
    private readonly cutoverStage: CutoverStage,
    private readonly now: () => number = Date.now,
  ) {
    this.digests = new DigestCache(aggregates, DIGEST_LIMITS);
  }

  async overview(range: RangeName): Promise<Overview> {
    const [snapshot, table] = await Promise.all([this.snapshot(range), this.tableSnapshot()]);
    const { parts } = snapshot;
    return {
      generatedAt: new Date(snapshot.now).toISOString(),
      traffic: parts.get('traffic'),
      clients: snapshot.clients(table).get('clients'),
      tasks: parts.get('tasks'),
      latency: parts.get('latency'),
      verdict: table.parts.get('verdict'),
      cutover: this.cutover(),
      recording: table.parts.get('recording'),
    };
  }

  async traffic(range: RangeName): Promise<TrafficReport> {
    return (await this.snapshot(range)).parts.get('traffic');
  }

  async clients(range: RangeName): Promise<ClientRow[]> {
    const [snapshot, table] = await Promise.all([this.snapshot(range), this.tableSnapshot()]);
    return snapshot.clients(table).get('clients');
  }

  async tasks(range: RangeName): Promise<TasksReport> {
    return (await this.snapshot(range)).parts.get('tasks');
  }

  async latency(range: RangeName): Promise<LatencyReport> {
    return (await this.snapshot(range)).parts.get('latency');
  }

  async verdict(): Promise<Verdict> {
    return (await this.tableSnapshot()).parts.get('verdict');
  }

  cutover(): CutoverState {
    return this.cutoverStage.state(this.now());
  }

  async recording(): Promise<RecordingReport> {
    return (await this.tableSnapshot()).parts.get('recording');
  }

  /**
   * An endpoint's answer as JSON text, byte for byte `JSON.stringify` of the object the methods
   * above give: each part is serialised once per snapshot, the overview is spliced from them.
   */
  async json(endpoint: Endpoint, range: RangeName): Promise<string> {
    switch (endpoint) {
      case 'overview': {
        const [snapshot, table] = await Promise.all([this.snapshot(range), this.tableSnapshot()]);
        const { parts } = snapshot;
        return (
          `{"generatedAt":${JSON.stringify(new Date(snapshot.now).toISOString())},"traffic":${parts.json('traffic')},"clients":${snapshot.clients(table).json('clients')},` +
          `"tasks":${parts.json('tasks')},"latency":${parts.json('latency')},"verdict":${table.parts.json('verdict')},` +
          `"cutover":${JSON.stringify(this.cutover())},"recording":${table.parts.json('recording')}}`
        );
      }
      case 'clients': {
        const [snapshot, table] = await Promise.all([this.snapshot(range), this.tableSnapshot()]);
        return `{"clients":${snapshot.clients(table).json('clients')}}`;
      }
      case 'traffic':
      case 'tasks':
      case 'latency':
        return (await this.snapshot(range)).parts.json(endpoint);
      case 'verdict':
      case 'recording':
        return (await this.tableSnapshot()).parts.json(endpoint);
      case 'cutover':
        return JSON.stringify(this.cutover());
    }
  }

  /** This replica's recorder wrote to the aggregates (or tried to): figures computed before are not served again. */
  written(): void {
    for (const shared of this.ranges.values()) shared.drop();
    this.table.drop();
  }

  /**
   * Reads every range's closed buckets into the digest cache and primes its totals, off the
   * request path; a call while one runs joins it.
   */
  warm(): Promise<void> {
    this.warming ??= this.digests
      .warm(
        RANGE_NAMES.map((range) => [range, windowSpec(range, this.now())]),
        this.now,
      )
      .finally(() => {
        this.warming = undefined;
      });
    return this.warming;
  }

  private snapshot(range: RangeName): Promise<RangeSnapshot> {
    const now = this.now();
    return (this.ranges.get(range) as Shared<RangeSnapshot>).get(now, async () => new RangeSnapshot(range, now, await this.digests.window(range, windowSpec(range, now), now)));
  }

  private tableSnapshot(): Promise<TableSnapshot> {
    const now = this.now();
    return this.table.get(now, async () => {
      const [clients, meta] = await Promise.all([this.aggregates.readClients(), this.aggregates.readMeta()]);
      return new TableSnapshot(now, clients, meta, this.aggregates.kind, this.cutoverStage.controls.quietPeriodMs);
    });
  }
}

function windowSpec(range: RangeName, now: number): WindowSpec {
  const { resolution, step } = RANGES[range];
  return { resolution, step, starts: bucketStarts(range, now) };
}
