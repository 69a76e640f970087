import type { ShimConfig } from '../config/schema.js';
import { errorFields, type Logger } from '../observe/logger.js';
import { UpstreamGateway } from '../upstream/gateway.js';

/** The upstream gateway of one replica, and what it says when the upstream does not answer. */
export interface UpstreamPart {
  gateway: UpstreamGateway;
  /** Logs an upstream that did not answer (never throws: the log never fails a request). */
  unreachable(operation: string, err: unknown): void;
  /**
   * Closes every upstream client. Called once the workers let go of their jobs: a call or mirror
   * cut from here on belongs to a job this replica released, so the failures the cut causes are
   * expected and not logged as the upstream's.
   */
  close(): Promise<void>;
}

export function openUpstream(config: ShimConfig & { upstreamUrl: string }, logger: Logger | undefined): UpstreamPart {
  let closing = false;
  const unreachable = (operation: string, err: unknown): void => {
    if (closing) return;
    try {
      logger?.error({ operation, ...errorFields(err) }, 'upstream unreachable');
    } catch {
      // The log never fails a request.
    }
  };
  const gateway = new UpstreamGateway({
    url: config.upstreamUrl,
    headers: config.upstreamHeaders,
    clientInfo: { name: config.serverName, version: config.serverVersion },
    protocol: config.upstreamProtocol,
    connections: config.upstreamConnections,
    onUnreachable: unreachable,
  });
  return {
    gateway,
    unreachable,
    async close() {
      closing = true;
      await gateway.close();
    },
  };
}
