import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LEGACY_MODES, type LegacyMode } from '../config/cutover.js';
import type { RequestEvent, StreamKind, TaskEvent } from './events.js';
import { CardinalityLimit, LATENCY_BOUNDS_MS, methodLabel, TERMINAL_BOUNDS_MS } from './layout.js';
import { PartsCache } from './parts-cache.js';
import { RequestSeries, type Series } from './request-series.js';

export interface MetricsOptions {
  /** The `replica` label on every series. */
  replica: string;
  store: 'redis' | 'embedded';
  version: string;
  /** Jobs waiting or running; read at scrape time, bounded by a timeout. */
  queueDepth: () => Promise<number>;
  /** Unflushed recording events, read at scrape time. */
  pendingEvents: () => number;
  /** The legacy mode in force, read at scrape time (a reload may change it). Absent: not exported. */
  legacyMode?: () => LegacyMode;
  /** This replica's SSE stream budget (src/http/stream-budget.ts), read at scrape time. */
  streamBudget?: { bufferedBytes: number; cutStreams: number; refusedStreams: number };
}

/** A legacy session counts as active on this replica for this long after its last request. */
const SESSION_ACTIVE_MS = 5 * 60_000;
const MAX_TRACKED_SESSIONS = 100_000;
const QUEUE_DEPTH_TIMEOUT_MS = 500;

/**
 * This replica's Prometheus series, in a registry of its own (never prom-client's global one),
 * so that two shims in one process, as in tests, keep theirs apart. Label values a client picks
 * are bounded: unknown methods read `other`, protocol versions past a few dozen read `(other)`.
 */
export class ShimMetrics {
  readonly registry = new Registry();
  private readonly requests: RequestSeries;
  private readonly tasks: Counter<'wire' | 'status'>;
  private readonly timeToTerminal: Histogram<'wire' | 'status'>;
  private readonly streams: Gauge<'kind'>;
  private readonly gaps: Counter;
  private readonly sessions = new Map<string, number>();
  /** Each request's series by its raw facts, so that a request costs a few lookups and additions. Client-chosen methods and versions map to few series but many keys: bounded. */
  private readonly children = new PartsCache<Series>(5_000);
  private readonly versions = new CardinalityLimit(32);
  /** The task counter's series by wire and event: a label lookup joins and hashes its values each time. */
  private readonly taskCounts = new PartsCache<{ inc(): void }>(100);

  constructor(options: MetricsOptions) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ replica: options.replica });
    collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestSeries(
      LATENCY_BOUNDS_MS.map((ms) => ms / 1000),
      this.registry,
    );
    this.tasks = new Counter({
      name: 'mcp_shim_tasks_total',
      help: 'Task lifecycle events applied by this replica, by the wire that created the task and the status reached',
      labelNames: ['wire', 'status'],
      registers,
    });
    this.timeToTerminal = new Histogram({
      name: 'mcp_shim_task_time_to_terminal_seconds',
      help: 'From task creation to its terminal status, by wire and terminal status',
      labelNames: ['wire', 'status'],
      buckets: TERMINAL_BOUNDS_MS.map((ms) => ms / 1000),
      registers,
    });
    this.streams = new Gauge({
      name: 'mcp_shim_open_streams',
      help: 'SSE streams open on this replica: legacy GET streams, legacy tasks/result streams, SEP-2663 listen streams',
      labelNames: ['kind'],
      registers,
    });
    for (const kind of ['legacy-get', 'legacy-result', 'listen'] as const) this.streams.labels(kind).set(0);
    const sessions = this.sessions;
    new Gauge({
      name: 'mcp_shim_active_sessions',
      help: `Legacy sessions with a request on this replica in the last ${SESSION_ACTIVE_MS / 60_000} minutes`,
      registers,
      collect() {
        const horizon = Date.now() - SESSION_ACTIVE_MS;
        for (const [id, at] of sessions) if (at < horizon) sessions.delete(id);
        this.set(sessions.size);
      },
    });
    new Gauge({
      name: 'mcp_shim_queue_depth',
      help: 'Task executions waiting or running in the shared queue',
      registers,
      async collect() {
        const depth = await withTimeout(options.queueDepth(), QUEUE_DEPTH_TIMEOUT_MS);
        if (depth !== undefined) this.set(depth);
      },
    });
    this.gaps = new Counter({
      name: 'mcp_shim_recording_gaps_total',
      help: 'Flushes of the traffic aggregates that could not be written (store unreachable); the counts wait in memory',
      registers,
    });
    new Gauge({
      name: 'mcp_shim_recording_pending_events',
      help: 'Requests and task events counted in memory and not yet written to the shared aggregates',
      registers,
      collect() {
        this.set(options.pendingEvents());
      },
    });
    const { legacyMode } = options;
    if (legacyMode) {
      // Each replica reloads its own files: this says which mode each one is in, e.g. after a partial rollout.
      new Gauge({
        name: 'mcp_shim_legacy_mode',
        help: 'The legacy mode in force on this replica: 1 for its mode (on, drain or off), 0 for the others',
        labelNames: ['mode'],
        registers,
        collect() {
          const mode = legacyMode();
          for (const each of LEGACY_MODES) this.labels(each).set(each === mode ? 1 : 0);
        },
      });
    }
    const budget = options.streamBudget;
    new Gauge({
      name: 'mcp_shim_stream_buffered_bytes',
      help: 'Bytes written to SSE streams on this replica that their clients have not read yet (bounded: docs/security.md)',
      registers,
      collect() {
        this.set(budget?.bufferedBytes ?? 0);
      },
    });
    new Counter({
      name: 'mcp_shim_stream_cuts_total',
      help: 'SSE streams this replica closed because their clients did not read fast enough',
      registers,
      collect() {
        this.reset();
        this.inc(budget?.cutStreams ?? 0);
      },
    });
    new Gauge({
      name: 'mcp_shim_info',
      help: 'This replica: its store and version',
      labelNames: ['store', 'version'],
      registers,
    })
      .labels(options.store, options.version)
      .set(1);
  }

  request(event: RequestEvent): void {
    // No version and an empty one both read `unknown`.
    const rawVersion = event.protocolVersion ?? '';
    let series = this.children.get(event.wire, event.method, rawVersion, event.outcome);
    if (!series) {
      const method = methodLabel(event.method);
      const version = /^[\w.-]{1,32}$/.test(rawVersion) ? this.versions.admit(rawVersion) : 'unknown';
      series = this.children.set(event.wire, event.method, rawVersion, event.outcome, this.requests.get(event.wire, method, version, event.outcome));
    }
    this.requests.observe(series, event.latencyMs / 1000);
  }

  task(event: TaskEvent): void {
    let count = this.taskCounts.get(event.wire, event.kind, '', '');
    if (!count) count = this.taskCounts.set(event.wire, event.kind, '', '', this.tasks.labels(event.wire, event.kind));
    count.inc();
    if (event.kind !== 'created') this.timeToTerminal.labels(event.wire, event.kind).observe((event.at - event.createdAt) / 1000);
  }

  streamOpened(kind: StreamKind): () => void {
    this.streams.labels(kind).inc();
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.streams.labels(kind).dec();
    };
  }

  sessionSeen(sessionId: string): void {
    if (this.sessions.size >= MAX_TRACKED_SESSIONS && !this.sessions.has(sessionId)) return;
    this.sessions.set(sessionId, Date.now());
  }

  gap(): void {
    this.gaps.inc();
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
