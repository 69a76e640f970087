import type { TaskService } from '../../core/task-service.js';
import type { SessionStore } from '../../session/session-store.js';
import type { UpstreamRpc } from '../../upstream/client/rpc-client.js';
import type { StreamAdmission } from '../reply.js';
import type { SessionlessUpstream } from './sessionless-upstream.js';

/** What the legacy adapter needs from the rest of the shim. */
export interface LegacyDeps {
  service: TaskService;
  sessions: SessionStore;
  /** The upstream gateway's HTTP client: forwarded messages, initialize, tools/list, GET streams, DELETE. */
  upstream: Pick<UpstreamRpc, 'forward' | 'post' | 'openStream' | 'deleteSession'>;
  /** Serves the sessions of an upstream that has none (a 2026-07-28 server) in place of the passthrough. */
  sessionless?: SessionlessUpstream;
  serverInfo: { name: string; version: string };
  /** Idle sessions expire after this long. */
  sessionIdleTtlMs: number;
  /** How long session indexes and stream logs are kept: the longest a task can live. */
  retentionMs: number;
  /** Refuses a GET or tasks/result stream while the replica holds too many unsent stream bytes. */
  streams: StreamAdmission;
  /** Hears a request to the upstream that got no answer (for the log); the client gets its error anyway. */
  onUpstreamUnreachable?: (operation: string, err: unknown) => void;
}
