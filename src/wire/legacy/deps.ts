import type { TaskService } from '../../core/task-service.js';
import type { OpenStreams } from '../../http/open-streams.js';
import type { SessionStore } from '../../session/session-store.js';
import type { LegacyHooks } from './hooks.js';
import type { Passthrough } from './passthrough.js';
import type { SessionlessUpstream } from './sessionless-upstream.js';

/** What the legacy adapter needs from the rest of the shim. */
export interface LegacyDeps {
  service: TaskService;
  sessions: SessionStore;
  passthrough: Passthrough;
  /** Serves the sessions of an upstream that has none (a 2026-07-28 server) in place of the passthrough. */
  sessionless?: SessionlessUpstream;
  upstreamUrl: string;
  /** The shim's own credentials at the upstream, on every request the adapter sends it. */
  upstreamHeaders: Readonly<Record<string, string>>;
  serverInfo: { name: string; version: string };
  /** Idle sessions expire after this long. */
  sessionIdleTtlMs: number;
  /** How long session indexes and stream logs are kept: the longest a task can live. */
  retentionMs: number;
  keepAliveMs: number;
  /** Where GET and tasks/result streams register, so that a shutdown ends them cleanly. */
  streams: OpenStreams;
  /** Traffic recording (src/observe/wire-hooks.ts). */
  hooks?: LegacyHooks;
  /** Hears a request to the upstream that got no answer (for the log); the client gets its error anyway. */
  onUpstreamUnreachable?: (operation: string, err: unknown) => void;
}
