import type { Server } from 'node:http';
import { cutoverSettings, describeLiveChanges, keyMaterialDigest } from './config/reload.js';
import type { ShimConfig } from './config/schema.js';
import { policyTable, type PolicyTable } from './core/policy-table.js';
import type { PolicySources, ToolPolicy } from './core/policy.js';
import { CutoverControls } from './cutover/controls.js';
import { CutoverStage } from './cutover/stage.js';
import { createAuthenticator } from './http/auth/authenticator.js';
import { OpenStreams } from './http/open-streams.js';
import type { Logger } from './observe/logger.js';
import { createObservability } from './observe/observability.js';
import { startApiRole } from './replica/api-role.js';
import { listen } from './replica/http-part.js';
import { openStores } from './replica/stores.js';
import { withTimeout } from './replica/timeout.js';
import { openUpstream } from './replica/upstream.js';
import { startJobs } from './replica/jobs.js';
import type { TaskStore } from './store/task-store.js';
import { executionMode } from './upstream/discovery.js';

export { MCP_PATH } from './replica/http-part.js';

export interface Shim {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`; a `worker` replica's server root (it serves no /mcp). */
  url: string;
  server: Server;
  store: TaskStore;
  /** Stops at once: connections cut, running jobs given a few seconds. */
  close(): Promise<void>;
  /**
   * The graceful stop (docs/operations.md, "Graceful shutdown"): not ready at once, streams
   * ended the way their wires ask, running jobs and then requests given up to `graceMs`, then
   * the rest released.
   */
  shutdown(options: { graceMs: number; delayMs?: number }): Promise<void>;
  /** Every upstream tool's effective policy and its source, from the tool catalog (bounded wait). */
  policies(): Promise<PolicyTable>;
  /**
   * Applies the settings of `config` that can change live (docs/operations.md, "Reloading"): key
   * material, task policies and the cutover controls. New key material is read first; when it
   * cannot be, this throws and nothing changes. Returns what changed, one line each.
   */
  reload(config: ShimConfig): Promise<string[]>;
}

export interface ShimOptions {
  /** Where problems that never reach a client go (unexpected errors); default: the logger's `error`, else stderr. */
  log?: (message: string) => void;
  /** The structured log: requests, task lifecycles, upstream failures (docs/operations.md, "Logs"). */
  logger?: Logger;
}

/** How long the policy table waits for the upstream's tools/list. */
const POLICY_LISTING_MS = 5_000;
/** What `close()` gives running jobs before they are handed on. */
const CLOSE_GRACE_MS = 5_000;

function configuredPolicies(config: ShimConfig): Record<string, ToolPolicy> {
  return Object.fromEntries(Object.entries(config.policies.tools).map(([tool, p]) => [tool, typeof p === 'string' ? { mode: p } : p]));
}

/**
 * The composition root: one replica of the shim, in the order a request meets its parts. The
 * stores and the upstream gateway serve both roles; the role decides, here and only here, which
 * of the worker role (queued jobs) and the API role (/mcp) run. Everything a replica shares with
 * the others lives in the stores; nothing here is state another replica needs.
 */
export async function startShim(config: ShimConfig & { upstreamUrl: string }, options: ShimOptions = {}): Promise<Shim> {
  const { logger } = options;
  const log = options.log ?? (logger ? (message) => logger.error(message) : (message) => console.error(message));
  const runsApi = config.role !== 'worker';
  const runsWorker = config.role !== 'api';

  // First: key material that cannot be read stops the start before anything is connected.
  const principalOptions = { anonymousPrincipal: config.anonymousPrincipal, trustProxy: config.trustProxy };
  const authenticate = await createAuthenticator(config.auth, principalOptions);
  // What a reload compares its key files with: the material just read.
  let liveKeys = keyMaterialDigest(config.auth);

  const stores = openStores(config, { sharedSessions: runsApi });
  const upstream = openUpstream(config, logger);
  const { gateway } = upstream;
  // Read at every call, so that a reload replaces its members.
  const policies: PolicySources = {
    configured: configuredPolicies(config),
    fallback: config.policies.default ?? 'auto',
    autoWindowMs: config.autoWindowMs,
  };
  const describePolicies = async (): Promise<PolicyTable> => {
    const [tools, report] = await withTimeout(
      // An upstream that could not be learned (down, or pinned to a protocol it does not speak) has
      // no tools to list: the table then says why, instead of failing with the listing.
      gateway.discover().then(async (learned) => [learned.problem ? [] : await gateway.catalog.all(), learned] as const),
      POLICY_LISTING_MS,
      `the upstream did not list its tools within ${POLICY_LISTING_MS / 1000} s`,
    );
    return policyTable(tools, gateway.catalog.declaresTasks(), policies, { report, execution: (tool) => executionMode(report, tool) });
  };
  const cutover = new CutoverStage(new CutoverControls(config));
  const streams = new OpenStreams({ maxStreamBytes: config.maxStreamBufferBytes, maxTotalBytes: config.maxStreamBufferTotalBytes }, config.listenKeepAliveMs);
  // What /readyz asks, and /metrics reports to the alerting rules.
  const readiness = { store: () => stores.store.ping(), upstream: () => gateway.ping() };
  // Before anything uses the store: task lifecycles are recorded at it (docs/dashboard.md).
  const observability = createObservability({
    config,
    store: stores.store,
    queue: stores.queue,
    cutover,
    sessionOf: (sessionId) => stores.sessions.get(sessionId, config.sessionIdleTtlMs),
    log,
    logger,
    policies: describePolicies,
    streamBudget: streams.budget,
    readiness,
  });
  await stores.ready().catch(async (err: unknown) => {
    await upstream.close();
    throw err;
  });

  // An `api` replica takes no queued job: workers elsewhere do (docs/operations.md, "Replica roles").
  const jobs = startJobs({ store: stores.store, queue: stores.queue, creation: stores.creation, gateway, policies, takesQueued: runsWorker });
  const api = runsApi ? startApiRole({ config, stores, intake: jobs.intake, upstream, policies, authenticate, cutover, observability, streams }) : undefined;

  /**
   * The end of every stop, once no job of this replica runs and the listener is closed: the last
   * figures, the upstream clients (a call or mirror still open belongs to a released job), then
   * the stores, which every part before writes to.
   */
  const releaseConnections = async (): Promise<void> => {
    await observability.close();
    await api?.close();
    await upstream.close();
    await stores.close();
  };
  const http = await listen({
    config,
    mcp: api?.handleMcp,
    routes: observability.routes,
    readiness,
    onError: (err) => log(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
  }).catch(async (err: unknown) => {
    // A port that cannot be bound: nothing was served, so nothing waits for a grace.
    api?.stopStreams();
    await jobs.stop(0);
    await releaseConnections();
    throw err;
  });
  let live = config;

  return {
    url: http.url,
    server: http.server,
    store: stores.store,
    policies: describePolicies,
    async close() {
      api?.stopStreams();
      await http.close(Date.now());
      await jobs.stop(CLOSE_GRACE_MS);
      await releaseConnections();
    },
    async reload(next) {
      // Read before anything changes: a key file that cannot be read keeps the running configuration.
      const nextAuthenticate = await createAuthenticator(next.auth, principalOptions);
      const nextKeys = keyMaterialDigest(next.auth);
      const changes = describeLiveChanges(live, next, liveKeys, nextKeys);
      liveKeys = nextKeys;
      api?.setAuthenticator(nextAuthenticate);
      policies.configured = configuredPolicies(next);
      policies.fallback = next.policies.default ?? 'auto';
      cutover.replace(new CutoverControls(next));
      live = { ...live, auth: next.auth, policies: next.policies, ...cutoverSettings(next) };
      return changes;
    },
    async shutdown({ graceMs, delayMs = 0 }) {
      // Not ready at once, so that load balancers stop sending; during the delay everything is
      // still served as usual, so that requests the balancer sends before it notices succeed.
      http.markNotReady();
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      // Until the running jobs are done the replica still answers whatever reaches it, each answer
      // closing its connection.
      http.markDraining();
      const deadline = Date.now() + graceMs;
      api?.stopStreams();
      await jobs.stop(graceMs);
      await http.close(deadline);
      await releaseConnections();
    },
  };
}
