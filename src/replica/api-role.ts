import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ShimConfig } from '../config/schema.js';
import { systemClock } from '../core/ports.js';
import type { PolicySources } from '../core/policy.js';
import type { TaskIntake } from '../core/task-intake.js';
import { TaskService } from '../core/task-service.js';
import type { CutoverStage } from '../cutover/stage.js';
import type { Authenticator } from '../http/auth/bearer.js';
import { createMcpEndpoint, type McpEndpointOptions } from '../http/mcp-endpoint.js';
import type { OpenStreams } from '../http/open-streams.js';
import type { Observability } from '../observe/observability.js';
import { LegacyAdapter } from '../wire/legacy/endpoint.js';
import { SessionReaper } from '../wire/legacy/session-reaper.js';
import { SessionlessUpstream } from '../wire/legacy/sessionless-upstream.js';
import { Sep2663Handler } from '../wire/sep2663/handler.js';
import type { Stores } from './stores.js';
import type { UpstreamPart } from './upstream.js';

export interface ApiRoleOptions {
  config: ShimConfig & { upstreamUrl: string };
  stores: Stores;
  /** Where tasks are created (the replica's jobs: src/replica/jobs.ts). */
  intake: TaskIntake;
  upstream: UpstreamPart;
  /** Read at every call, so that a reload replaces its members. */
  policies: PolicySources;
  authenticate: Authenticator;
  cutover: CutoverStage;
  observability: Observability;
  /** The replica's open streams, ended first in a shutdown. */
  streams: OpenStreams;
}

/** The API role: POST /mcp through the cutover stage to the wire adapters and the core (roles `all` and `api`). */
export interface ApiRole {
  handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Takes over at once, for the next request: a reload's new key material. */
  setAuthenticator(authenticate: Authenticator): void;
  /** The start of a shutdown: open streams end the way their wires ask, and the session sweep stops. */
  stopStreams(): void;
  /** Ends the sessionless bridge's running requests; after the listener closed, before the upstream gateway closes. */
  close(): Promise<void>;
}

export function startApiRole(options: ApiRoleOptions): ApiRole {
  const { config, stores, intake, upstream, policies, cutover, observability, streams } = options;
  const { gateway } = upstream;
  const serverInfo = { name: config.serverName, version: config.serverVersion };
  const service = new TaskService({
    store: stores.store,
    intake,
    limits: stores.limits,
    invoker: gateway,
    upstreamRunsTasks: (tool) => gateway.isNative(tool),
    catalog: gateway.catalog,
    clock: systemClock,
    policies,
    defaultTtlMs: config.defaultTtlMs,
    maxTtlMs: config.maxTtlMs,
    pollIntervalMs: config.pollIntervalMs,
  });
  const sep2663 = new Sep2663Handler({
    service,
    catalog: gateway.catalog,
    upstream: gateway,
    serverInfo,
    instructions: 'Long-running tools may answer with a task handle; poll it with tasks/get.',
    maxListenTaskIds: config.maxListenTaskIds,
    streams,
  });
  // Legacy sessions in front of a 2026-07-28 upstream, which has none: translated through the gateway.
  const sessionless = new SessionlessUpstream({
    upstream: {
      protocol: async () => (await gateway.discover()).protocol,
      serverDiscover: (signal) => gateway.serverDiscover(signal),
      request: (method, params, schema, signal, timeoutMs) => gateway.request(method, params, schema, signal, timeoutMs),
      callTool: (name, args, options) => gateway.callTool(name, args, options),
    },
    serverInfo,
    timeoutMs: () => service.syncTimeoutMs,
    cancels: stores.sessions,
  });
  const legacy = new LegacyAdapter({
    service,
    sessions: stores.sessions,
    upstream: gateway.http,
    sessionless,
    serverInfo,
    sessionIdleTtlMs: config.sessionIdleTtlMs,
    retentionMs: config.maxTtlMs,
    streams,
    onUpstreamUnreachable: upstream.unreachable,
  });
  // Lapsed sessions' upstream sessions are closed from whichever api replica sweeps first.
  const reaper = new SessionReaper({
    sessions: stores.sessions,
    service,
    upstream: gateway.http,
    idleTtlMs: config.sessionIdleTtlMs,
  });
  reaper.start();
  // Read per request, so that a reload's new authenticator takes over at once.
  const endpoint: McpEndpointOptions = {
    sep2663,
    legacy,
    streams,
    legacyHooks: observability.legacyHooks,
    authenticate: options.authenticate,
    allowedOrigins: config.allowedOrigins,
    maxBodyBytes: config.maxBodyBytes,
    cutover: (res, parsed) => cutover.legacy(res, parsed),
    observeRefusal: (req, parsed, principal, reply) => observability.legacyHooks.refused(req, parsed, principal, reply),
    observe: observability.observeSep2663,
  };
  return {
    handleMcp: createMcpEndpoint(endpoint),
    setAuthenticator(authenticate) {
      endpoint.authenticate = authenticate;
    },
    stopStreams() {
      reaper.stop();
      streams.endAll();
    },
    close: async () => {
      sessionless.close();
    },
  };
}
