import { z } from 'zod';
import { TASK_POLICIES } from '../core/policy.js';
import { LOG_LEVELS } from '../observe/log-levels.js';
import { UPSTREAM_PROTOCOLS } from '../upstream/discovery.js';
import { AuthSchema } from './auth-schema.js';
import { checkCutover, CUTOVER_DEFAULTS, CUTOVER_FIELDS } from './cutover.js';
import { checkEdge, EDGE_DEFAULTS, EDGE_FIELDS } from './edge.js';
import { UpstreamHeadersSchema } from './upstream-headers.js';

const policyNames = z.enum(TASK_POLICIES, { error: `expected one of ${TASK_POLICIES.join(', ')}` });
const toolPolicy = z.union(
  [
    policyNames,
    z.strictObject({
      mode: policyNames,
      syncWindowMs: z.number().int().min(0).max(60_000).optional(),
      idempotent: z.boolean().optional(),
    }),
  ],
  {
    error: (issue) =>
      issue.input !== null && typeof issue.input === 'object'
        ? `expected {"mode": ${TASK_POLICIES.join(' | ')}, "syncWindowMs"?: 0 to 60000, "idempotent"?: true | false}`
        : `expected one of ${TASK_POLICIES.join(', ')} (or an object with "mode"), got ${JSON.stringify(issue.input)}`,
  },
);

/** The policy file: `{"default": "auto", "tools": {"greet": "forbidden", "build": {"mode": "required"}}}`. */
export const PolicyFileSchema = z.strictObject({
  default: policyNames.optional(),
  tools: z.record(z.string().min(1), toolPolicy).default({}),
});
export type PolicyFile = z.infer<typeof PolicyFileSchema>;

/**
 * The tokens file: `{"<bearer token>": "<principal>"}`. Tokens are secrets, so a problem names
 * the principal, never the token.
 */
export const TokensFileSchema = z
  .record(z.string(), z.string().min(1, 'a principal must not be empty'))
  .superRefine((tokens, ctx) => {
    for (const [token, principal] of Object.entries(tokens)) {
      if (token.length < 16) ctx.addIssue({ code: 'custom', message: `the token of principal '${principal}' is shorter than 16 characters` });
    }
  });

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const redisUrl = z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' });
/** One URL, or (for a Redis Cluster) comma-separated seed node URLs. */
const redisUrls = z.string().superRefine((value, ctx) => {
  const urls = value.split(',').map((each) => each.trim());
  for (const each of urls) {
    if (redisUrl.safeParse(each).success) continue;
    const message = 'must be a redis:// or rediss:// URL';
    ctx.addIssue({ code: 'custom', message: urls.length === 1 ? message : `seed '${each}' ${message}` });
  }
});

/** What one replica does (docs/operations.md, "Replica roles"). */
const SHIM_ROLES = ['all', 'api', 'worker'] as const;
export type ShimRole = (typeof SHIM_ROLES)[number];

export const ConfigSchema = z.strictObject({
  /** `all`: serves /mcp and runs task jobs; `api`: serves /mcp, queues jobs; `worker`: runs jobs, no /mcp. */
  role: z.enum(SHIM_ROLES, { error: `must be one of ${SHIM_ROLES.join(', ')}` }),
  port: z.number().int().min(0).max(65_535),
  host: z.string().min(1),
  /** Absent: `npm start` runs the demo upstream in-process and fronts it. */
  upstreamUrl: httpUrl.optional(),
  /** What the upstream speaks: `auto` asks it at start (docs/configuration.md, "Upstream protocol"). */
  upstreamProtocol: z.enum(UPSTREAM_PROTOCOLS, { error: `must be one of ${UPSTREAM_PROTOCOLS.join(', ')}` }),
  /** Absent: the embedded, single-process store. */
  redisUrl: redisUrls.optional(),
  /** `redisUrl` lists seed nodes of a Redis Cluster (docs/operations.md, "Redis Cluster"). */
  redisCluster: z.boolean(),
  redisPrefix: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  policies: PolicyFileSchema,
  autoWindowMs: z.number().int().min(0).max(60_000),
  defaultTtlMs: z.number().int().min(1_000),
  maxTtlMs: z.number().int().min(1_000),
  pollIntervalMs: z.number().int().min(100),
  maxBodyBytes: z.number().int().min(1_024).max(64 * 1024 * 1024),
  listenKeepAliveMs: z.number().int().min(100),
  /** Legacy sessions expire after this long without a request. */
  sessionIdleTtlMs: z.number().int().min(1_000),
  maxListenTaskIds: z.number().int().min(1).max(10_000),
  /** Open tasks one principal may hold, fleet-wide; 0: no limit (docs/decisions/0006-limits.md). */
  maxOpenTasksPerPrincipal: z.number().int().min(0).max(1_000_000),
  /** Open listen, GET and tasks/result streams one principal may hold, fleet-wide; 0: no limit. */
  maxOpenStreamsPerPrincipal: z.number().int().min(0).max(1_000_000),
  /** Legacy sessions one principal may hold, fleet-wide; 0: no limit. */
  maxSessionsPerPrincipal: z.number().int().min(0).max(1_000_000),
  /** Unsent bytes one SSE stream may hold before it is closed (docs/decisions/0018-stream-backpressure.md). */
  maxStreamBufferBytes: z.number().int().min(64 * 1024).max(1024 * 1024 * 1024),
  /** Unsent bytes all SSE streams of a replica may hold before new ones are refused and lagging ones closed. */
  maxStreamBufferTotalBytes: z.number().int().min(64 * 1024).max(64 * 1024 * 1024 * 1024),
  /** On SIGTERM, how long running jobs and requests may take before they are released (docs/operations.md). */
  shutdownGraceMs: z.number().int().min(0).max(3_600_000),
  /** On SIGTERM, how long `/readyz` answers 503 while everything is still served, before the graceful stop begins. */
  shutdownDelayMs: z.number().int().min(0).max(600_000),
  /** Reload the configuration when one of its files changes, as on SIGHUP (docs/operations.md, "Reloading"). */
  watchConfig: z.boolean(),
  /** The least severe log line written (docs/operations.md, "Logs"); `silent` writes none. */
  logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
  /** Request lines carry the tool arguments of `tools/call` and `tasks/create`: they may hold secrets, so off by default. */
  logArguments: z.boolean(),
  /** Jobs one replica runs at once, taken from the queue or run from their task's creation (docs/decisions/0032). */
  workerConcurrency: z.number().int().min(1).max(10_000),
  /** Connections to the upstream for requests at once (calls, forwards); GET streams have their own. */
  upstreamConnections: z.number().int().min(1).max(65_536),
  /** A dead replica's jobs are handed to another worker within about twice this (lock expiry, then two stall checks). */
  jobLockMs: z.number().int().min(1_000).max(600_000),
  /** Origins allowed to call /mcp from a browser. A request without Origin is always allowed. */
  allowedOrigins: z.array(z.string()),
  auth: AuthSchema,
  /** In auth mode none: `shared` (every client is `anonymous`) or `per-address` (`anonymous@<client address>`). */
  anonymousPrincipal: z.enum(['shared', 'per-address'], { error: 'must be shared or per-address' }),
  /** Sent with every request to the upstream: the shim's own credentials there (names lower-cased). */
  upstreamHeaders: UpstreamHeadersSchema,
  serverName: z.string().min(1),
  serverVersion: z.string().min(1),
  ...CUTOVER_FIELDS,
  ...EDGE_FIELDS,
})
  .refine((c) => c.defaultTtlMs <= c.maxTtlMs, { message: 'must not exceed the maximum TTL (SHIM_MAX_TTL_MS)', path: ['defaultTtlMs'] })
  .superRefine(checkCutover)
  .superRefine(checkEdge)
  .superRefine((c, ctx) => {
    if (c.anonymousPrincipal !== 'shared' && c.auth.mode !== 'none') ctx.addIssue({ code: 'custom', message: `applies to auth mode none only, not ${c.auth.mode}`, path: ['anonymousPrincipal'] });
    if (c.redisCluster && !c.redisUrl) ctx.addIssue({ code: 'custom', message: 'a Redis Cluster needs its seed node URLs in --redis or REDIS_URL', path: ['redisCluster'] });
    if (!c.redisCluster && c.redisUrl?.includes(',')) ctx.addIssue({ code: 'custom', message: 'several URLs are seed nodes of a Redis Cluster: set --redis-cluster (SHIM_REDIS_CLUSTER=true) too', path: ['redisUrl'] });
    // Without Redis there is no shared queue: an api replica's jobs would never run, a worker would have none.
    if (c.role !== 'all' && !c.redisUrl) ctx.addIssue({ code: 'custom', message: `role '${c.role}' needs Redis (--redis or REDIS_URL): api and worker replicas share the task queue there`, path: ['role'] });
  });

export type ShimConfig = z.infer<typeof ConfigSchema>;

/** A config file is one JSON object; its keys are checked against the configuration's own. */
export const ConfigFileSchema = z.record(z.string(), z.unknown());

export const DEFAULT_CONFIG: ShimConfig = {
  role: 'all',
  port: 8080,
  host: '127.0.0.1',
  upstreamProtocol: 'auto',
  redisPrefix: 'mts',
  redisCluster: false,
  policies: { tools: {} },
  autoWindowMs: 1_000,
  defaultTtlMs: 60 * 60 * 1000,
  maxTtlMs: 24 * 60 * 60 * 1000,
  pollIntervalMs: 2_000,
  maxBodyBytes: 1024 * 1024,
  listenKeepAliveMs: 15_000,
  sessionIdleTtlMs: 24 * 60 * 60 * 1000,
  maxListenTaskIds: 100,
  maxOpenTasksPerPrincipal: 1_000,
  maxOpenStreamsPerPrincipal: 1_000,
  maxSessionsPerPrincipal: 1_000,
  maxStreamBufferBytes: 4 * 1024 * 1024,
  maxStreamBufferTotalBytes: 64 * 1024 * 1024,
  shutdownGraceMs: 25_000,
  shutdownDelayMs: 5_000,
  watchConfig: false,
  logLevel: 'info',
  logArguments: false,
  workerConcurrency: 1_000,
  upstreamConnections: 1_024,
  jobLockMs: 30_000,
  allowedOrigins: [],
  auth: { mode: 'none' },
  anonymousPrincipal: 'shared',
  upstreamHeaders: {},
  serverName: 'mcp-tasks-shim',
  serverVersion: '0.1.0',
  ...CUTOVER_DEFAULTS,
  ...EDGE_DEFAULTS,
};
