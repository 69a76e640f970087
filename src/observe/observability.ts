import { hostname } from 'node:os';
import type { Router } from 'express';
import type { ShimConfig } from '../config/schema.js';
import type { PolicyTable } from '../core/policy-table.js';
import type { CutoverStage } from '../cutover/stage.js';
import type { WorkQueue } from '../execution/work-queue.js';
import type { SessionRecord } from '../session/session-store.js';
import type { TaskStore } from '../store/task-store.js';
import type { AggregateStore } from './aggregates.js';
import { registerAlertSeries } from './alert-series.js';
import type { Recorder } from './events.js';
import { LimitUsage, observeLimitUsage } from './limit-usage.js';
import type { Logger } from './logger.js';
import { MemoryAggregateStore } from './memory-aggregates.js';
import { ShimMetrics } from './metrics.js';
import { TrafficRecorder } from './recorder.js';
import { RedisAggregateStore } from './redis-aggregates.js';
import { LoggingRecorder } from './request-log.js';
import { Reports } from './report.js';
import { observabilityRoutes } from './routes.js';
import { StuckTasks } from './stuck-tasks.js';
import { observeTaskLifecycle } from './task-events.js';
import { observeSep2663, OldApiHooks } from './wire-hooks.js';
import { notifyingWrites } from './written-store.js';

export interface Observability {
  recorder: TrafficRecorder;
  /** The legacy adapter's hooks, and the recording of the cutover stage's refusals. */
  legacyHooks: OldApiHooks;
  /** The MCP endpoint's hook on SEP-2663 answers. */
  observeSep2663: ReturnType<typeof observeSep2663>;
  /** `/metrics`, `/dashboard` and `/dashboard/api/*`, for the express app. */
  routes: Router;
  close(): Promise<void>;
}

export interface ObservabilityOptions {
  config: ShimConfig;
  store: TaskStore;
  queue: WorkQueue;
  /** The cutover stage whose state the dashboard shows; observability only reads it. */
  cutover: CutoverStage;
  /** A legacy session, for attributing a refused request to its client. */
  sessionOf: (sessionId: string) => Promise<SessionRecord | undefined>;
  log: (message: string) => void;
  /** Where the request and task lifecycle lines go (docs/operations.md, "Logs"); none without it. */
  logger?: Logger;
  /** The upstream tools' effective policies, for the dashboard. */
  policies?: () => Promise<PolicyTable>;
  /** This replica's SSE stream budget, read at scrape time. */
  streamBudget?: { bufferedBytes: number; cutStreams: number; refusedStreams: number };
  /** The readiness checks of /readyz by name, which /metrics also reports (`mcp_shim_dependency_up`). */
  readiness: Record<string, () => Promise<boolean>>;
  /** Overrides for tests. */
  flushMs?: number;
}

/**
 * Wires the traffic recorder, the metrics and the reports of one replica.
 * With Redis the aggregates are the fleet's; with the embedded store they live in this process.
 */
export function createObservability(options: ObservabilityOptions): Observability {
  const { config, store, queue } = options;
  const aggregates: AggregateStore = config.redisUrl
    ? new RedisAggregateStore({ url: config.redisUrl, cluster: config.redisCluster, prefix: config.redisPrefix })
    : new MemoryAggregateStore();
  const metrics: ShimMetrics = new ShimMetrics({
    replica: config.replicaId ?? `${hostname()}-${process.pid}`,
    store: store.kind,
    version: config.serverVersion,
    queueDepth: () => queue.depth(),
    // Read at scrape time, once the recorder exists.
    pendingEvents: (): number => recorder.pending,
    legacyMode: () => options.cutover.controls.legacy,
    streamBudget: options.streamBudget,
  });
  const usage = new LimitUsage();
  observeLimitUsage(store, usage);
  const stuck = new StuckTasks(store);
  registerAlertSeries(metrics.registry, {
    readiness: options.readiness,
    limits: { tasks: config.maxOpenTasksPerPrincipal, streams: config.maxOpenStreamsPerPrincipal, sessions: config.maxSessionsPerPrincipal },
    usage,
    stuck,
    refusedStreams: () => options.streamBudget?.refusedStreams ?? 0,
    sunset: () => {
      const at = options.cutover.controls.state(Date.now()).sunset?.at;
      return at === undefined ? undefined : Date.parse(at);
    },
  });
  const reports = new Reports(aggregates, options.cutover);
  const recorder: TrafficRecorder = new TrafficRecorder({
    aggregates: notifyingWrites(aggregates, () => reports.written()),
    metrics,
    flushMs: options.flushMs,
    log: options.log,
  });
  // The log hears what the recorder records, at the same points.
  const heard: Recorder = options.logger ? new LoggingRecorder(recorder, options.logger, config.logArguments) : recorder;
  observeTaskLifecycle(store, {
    record: (event) => heard.record(event),
    task: (event) => {
      heard.task(event);
      stuck.task(event);
    },
    streamOpened: (kind) => heard.streamOpened(kind),
    sessionSeen: (sessionId) => heard.sessionSeen(sessionId),
  });
  recorder.start();
  return {
    recorder,
    legacyHooks: new OldApiHooks(heard, options.sessionOf),
    observeSep2663: observeSep2663(heard),
    routes: observabilityRoutes({
      reports,
      metrics,
      token: config.dashboardToken,
      trustProxy: config.trustProxy,
      dashboard: config.role !== 'worker',
      policies: options.policies,
    }),
    close: () => {
      stuck.close();
      return recorder.close();
    },
  };
}
