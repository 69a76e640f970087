import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { redactUrl } from './config/redact.js';
import type { ShimConfig } from './config/schema.js';
import { systemClock } from './core/ports.js';
import { PrincipalLimits } from './core/limits.js';
import { policyTable, type PolicyTable } from './core/policy-table.js';
import { configuredPolicy, type PolicySources, type ToolPolicy } from './core/policy.js';
import { StepwiseIntake, type TaskIntake } from './core/task-intake.js';
import { TaskService } from './core/task-service.js';
import { InProcessQueue } from './execution/in-process-queue.js';
import { OneScriptIntake } from './execution/one-script-intake.js';
import { RedisWorkQueue } from './execution/redis-queue.js';
import { TaskRunner } from './execution/task-runner.js';
import type { WorkQueue } from './execution/work-queue.js';
import { createAuthenticator } from './http/auth/authenticator.js';
import { createMcpEndpoint, type McpEndpointOptions } from './http/mcp-endpoint.js';
import { drainServer } from './http/drain-server.js';
import { OpenStreams } from './http/open-streams.js';
import { createHttpServer } from './http/server.js';
import { CutoverControls } from './cutover/controls.js';
import { CutoverStage } from './cutover/stage.js';
import { cutoverSettings, describeLiveChanges, keyMaterialDigest } from './config/reload.js';
import { errorFields, type Logger } from './observe/logger.js';
import { createObservability } from './observe/observability.js';
import { UpstreamGateway, type ToolMode } from './upstream/gateway.js';
import type { UpstreamReport } from './upstream/discovery.js';
import { EmbeddedTaskStore } from './store/embedded/embedded-store.js';
import { RedisTaskStore } from './store/redis/redis-store.js';
import type { TaskStore } from './store/task-store.js';
import { EmbeddedSessionStore } from './session/embedded-session-store.js';
import { RedisSessionStore } from './session/redis-session-store.js';
import type { SessionStore } from './session/session-store.js';
import { LegacyAdapter } from './wire/legacy/endpoint.js';
import { SessionReaper } from './wire/legacy/session-reaper.js';
import { Sep2663Handler } from './wire/sep2663/handler.js';

export interface Shim {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`; a `worker` replica's server root (it serves no /mcp). */
  url: string;
  server: Server;
  store: TaskStore;
  /** What the upstream speaks and how each of its tools runs, learned at start (the start-up lines print it). */
  upstream(): Promise<{ report: UpstreamReport; tools: ToolMode[] }>;
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

export const MCP_PATH = '/mcp';

const STORE_READY_MS = 10_000;
/** How long the policy table waits for the upstream's tools/list. */
const POLICY_LISTING_MS = 5_000;

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** What an operator needs when Redis does not answer at start: where, how long we waited, what to check. */
function storeUnreachable(config: ShimConfig): string {
  const where = config.redisUrl ? `Redis at ${redactUrl(config.redisUrl)}` : 'the task store';
  return (
    `${where} did not answer within ${STORE_READY_MS / 1000} s. Check that Redis runs and listens there, that this host can reach ` +
    'it (address, port, firewall), the password in the URL, rediss:// if it needs TLS' +
    (config.redisCluster ? ', and that the seeds are nodes of a Redis Cluster' : '')
  );
}

function configuredPolicies(config: ShimConfig): Record<string, ToolPolicy> {
  return Object.fromEntries(Object.entries(config.policies.tools).map(([tool, p]) => [tool, typeof p === 'string' ? { mode: p } : p]));
}

/** A `worker` replica answers MCP requests with a 404 that says where they belong. */
async function notServedHere(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: 'this replica runs task jobs only (role worker); send MCP requests to an api or all replica' }));
}

/**
 * The composition root: one replica of the shim. Everything a replica shares with the others
 * lives in the store and the queue; nothing here is state another replica needs.
 */
export async function startShim(config: ShimConfig & { upstreamUrl: string }, options: ShimOptions = {}): Promise<Shim> {
  const { logger } = options;
  const log = options.log ?? (logger ? (message) => logger.error(message) : (message) => console.error(message));
  const upstreamUnreachable = (operation: string, err: unknown): void => {
    try {
      logger?.error({ operation, ...errorFields(err) }, 'upstream unreachable');
    } catch {
      // The log never fails a request.
    }
  };
  // First: key material that cannot be read stops the start before anything is connected.
  const principalOptions = { anonymousPrincipal: config.anonymousPrincipal, trustProxy: config.trustProxy };
  const authenticate = await createAuthenticator(config.auth, principalOptions);
  // What a reload compares its key files with: the material just read.
  let liveKeys = keyMaterialDigest(config.auth);
  const redisStore = config.redisUrl
    ? new RedisTaskStore({ url: config.redisUrl, cluster: config.redisCluster, prefix: config.redisPrefix })
    : undefined;
  const store: TaskStore = redisStore ?? new EmbeddedTaskStore();
  // A worker serves no sessions; the embedded store is passive and opens no connection.
  const sessions: SessionStore = config.redisUrl && config.role !== 'worker'
    ? new RedisSessionStore({ url: config.redisUrl, cluster: config.redisCluster, prefix: config.redisPrefix })
    : new EmbeddedSessionStore();
  const redisQueue = config.redisUrl
    ? new RedisWorkQueue({
        redisUrl: config.redisUrl,
        redisCluster: config.redisCluster,
        prefix: config.redisPrefix,
        concurrency: config.workerConcurrency,
        lockDurationMs: config.jobLockMs,
      })
    : undefined;
  const queue: WorkQueue = redisQueue ?? new InProcessQueue(config.workerConcurrency);
  const cutover = new CutoverStage(new CutoverControls(config));
  const streams = new OpenStreams({ maxStreamBytes: config.maxStreamBufferBytes, maxTotalBytes: config.maxStreamBufferTotalBytes }, config.listenKeepAliveMs);
  // The table reads the catalog built below; it is only called once the shim is up.
  const describePolicies = async (): Promise<PolicyTable> => {
    const tools = await withTimeout(catalog.all(), POLICY_LISTING_MS, `the upstream did not list its tools within ${POLICY_LISTING_MS / 1000} s`);
    return policyTable(tools, catalog.declaresTasks(), policies);
  };
  // Before anything uses the store: task lifecycles are recorded at it (docs/dashboard.md).
  const observability = createObservability({
    config,
    store,
    queue,
    cutover,
    sessionOf: (sessionId) => sessions.get(sessionId, config.sessionIdleTtlMs),
    log,
    logger,
    policies: describePolicies,
    streamBudget: streams.budget,
  });
  const gateway = new UpstreamGateway({
    url: config.upstreamUrl,
    headers: config.upstreamHeaders,
    clientInfo: { name: config.serverName, version: config.serverVersion },
    protocol: config.upstreamProtocol,
    // As many as the worker runs at once, plus a few for discovery and translated requests.
    maxIdle: config.workerConcurrency + 8,
    onUnreachable: upstreamUnreachable,
  });
  const { catalog } = gateway;
  // Read at every call, so that a reload replaces its members.
  const policies: PolicySources = {
    configured: configuredPolicies(config),
    fallback: config.policies.default ?? 'auto',
    autoWindowMs: config.autoWindowMs,
  };
  const limits = new PrincipalLimits(
    store,
    {
      maxOpenTasks: config.maxOpenTasksPerPrincipal,
      maxOpenStreams: config.maxOpenStreamsPerPrincipal,
      maxSessions: config.maxSessionsPerPrincipal,
      // Renewed on every keep-alive: a stream of a replica that died stops counting after three missed ones.
      streamLeaseMs: 3 * config.listenKeepAliveMs,
    },
    systemClock,
  );
  // One Redis creates a task in one script; a Cluster keeps the task and the queue in different slots.
  const intake: TaskIntake =
    redisStore && redisQueue && !config.redisCluster
      ? new OneScriptIntake(redisStore, redisQueue.keys.waiting, limits)
      : new StepwiseIntake(store, queue, limits, systemClock);
  const service = new TaskService({
    store,
    intake,
    limits,
    invoker: gateway,
    catalog,
    clock: systemClock,
    policies,
    defaultTtlMs: config.defaultTtlMs,
    maxTtlMs: config.maxTtlMs,
    pollIntervalMs: config.pollIntervalMs,
  });
  // `notReady`: /readyz answers 503 (the pre-stop delay and after); `draining`: the graceful stop has begun.
  let notReady = false;
  let draining = false;
  const runner = new TaskRunner({
    store,
    invoker: gateway,
    native: gateway,
    isIdempotent: (tool) => configuredPolicy(policies, tool)?.idempotent === true,
  });
  // Changes published before the subscription is live would be lost to the first watchers; a
  // store that cannot subscribe within the bound is unreachable, and we say so instead of hanging.
  await withTimeout(store.subscriptionReady(), STORE_READY_MS, storeUnreachable(config)).catch(
    async (err: unknown) => {
      await Promise.allSettled([store.close(), sessions.close(), queue.close(0), gateway.close()]);
      throw err;
    },
  );
  // An `api` replica only queues: workers elsewhere take its jobs (docs/operations.md, "Replica roles").
  if (config.role !== 'api') queue.start(runner.process);

  const sep2663 = new Sep2663Handler({
    service,
    catalog,
    upstream: {
      listTools: () => gateway.listTools() as never,
      capabilities: () => gateway.capabilities(),
      request: (m, p, s, signal) => gateway.request(m, p, s, signal),
    },
    serverInfo: { name: config.serverName, version: config.serverVersion },
    instructions: 'Long-running tools may answer with a task handle; poll it with tasks/get.',
    maxListenTaskIds: config.maxListenTaskIds,
    streams,
  });
  const legacy = new LegacyAdapter({
    service,
    sessions,
    upstream: gateway.http,
    serverInfo: { name: config.serverName, version: config.serverVersion },
    sessionIdleTtlMs: config.sessionIdleTtlMs,
    retentionMs: config.maxTtlMs,
    streams,
    onUpstreamUnreachable: upstreamUnreachable,
  });
  // Lapsed sessions' upstream sessions are closed from whichever api replica sweeps first.
  const reaper = new SessionReaper({
    sessions,
    limits,
    upstream: gateway.http,
    idleTtlMs: config.sessionIdleTtlMs,
  });
  if (config.role !== 'worker') reaper.start();
  // Read per request, so that a reload's new authenticator takes over at once.
  const endpoint: McpEndpointOptions = {
    sep2663,
    legacy,
    streams,
    legacyHooks: observability.legacyHooks,
    authenticate,
    allowedOrigins: config.allowedOrigins,
    maxBodyBytes: config.maxBodyBytes,
    cutover: (res, parsed) => cutover.legacy(res, parsed),
    observeRefusal: (req, parsed, principal, reply) => observability.legacyHooks.refused(req, parsed, principal, reply),
    observe: observability.observeSep2663,
  };
  const handleMcp = config.role === 'worker' ? notServedHere : createMcpEndpoint(endpoint);
  let live = config;
  const { server, app } = createHttpServer(
    MCP_PATH,
    handleMcp,
    { readiness: { store: () => store.ping(), upstream: () => gateway.ping() }, notReady: () => notReady, draining: () => draining },
    (err) => log(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    { headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, maxConnections: config.maxConnections },
  );

  // A worker's traffic figures are its jobs: /metrics only, the dashboard is the api replicas'.
  if (config.role === 'worker') app.get('/metrics', observability.routes);
  else app.use(observability.routes);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  return {
    url: `http://${host}:${port}${config.role === 'worker' ? '/' : MCP_PATH}`,
    server,
    store,
    policies: describePolicies,
    upstream: async () => {
      const report = await gateway.discover();
      return { report, tools: report.problem ? [] : await gateway.toolModes().catch(() => []) };
    },
    async close() {
      reaper.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await queue.close(5_000);
      await observability.close();
      await gateway.close();
      await sessions.close();
      await store.close();
    },
    async reload(next) {
      // Read before anything changes: a key file that cannot be read keeps the running configuration.
      const nextAuthenticate = await createAuthenticator(next.auth, principalOptions);
      const nextKeys = keyMaterialDigest(next.auth);
      const changes = describeLiveChanges(live, next, liveKeys, nextKeys);
      liveKeys = nextKeys;
      endpoint.authenticate = nextAuthenticate;
      policies.configured = configuredPolicies(next);
      policies.fallback = next.policies.default ?? 'auto';
      cutover.replace(new CutoverControls(next));
      live = { ...live, auth: next.auth, policies: next.policies, ...cutoverSettings(next) };
      return changes;
    },
    async shutdown({ graceMs, delayMs = 0 }) {
      // Not ready at once, so that load balancers stop sending; during the delay everything is
      // still served as usual, so that requests the balancer sends before it notices succeed.
      notReady = true;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      // Until the running jobs are done the replica still answers whatever reaches it, each answer
      // closing its connection.
      draining = true;
      reaper.stop();
      const deadline = Date.now() + graceMs;
      streams.endAll();
      await queue.drain(graceMs);
      await drainServer(server, deadline);
      await queue.close(0);
      await observability.close();
      // The stores close before the upstream pool: a released job whose call the pool's close
      // aborts must not record that as the task's failure; another replica takes it over.
      await sessions.close();
      await store.close();
      await gateway.close();
    },
  };
}
