import { z } from 'zod';

/**
 * Settings of the HTTP edge: how long a client may take to send a request, how many connections
 * a replica holds, and whether the proxy in front says how the client connected
 * (docs/security.md, "Bounds"). Kept beside the main schema so that it stays one spread there.
 */
export const EDGE_FIELDS = {
  /** `X-Forwarded-Proto` from the proxy in front is believed: the dashboard cookie gets `Secure` behind TLS there. */
  trustProxy: z.boolean(),
  /** A request's headers must arrive within this long (node's `headersTimeout`). */
  headersTimeoutMs: z.number().int().min(1_000).max(600_000),
  /** A whole request, headers and body, must arrive within this long (node's `requestTimeout`); responses and streams are not bounded by it. */
  requestTimeoutMs: z.number().int().min(1_000).max(3_600_000),
  /** Open connections one replica accepts; more are closed at once. 0: no limit. */
  maxConnections: z.number().int().min(0).max(1_000_000),
};

export const EDGE_DEFAULTS = {
  trustProxy: false,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnections: 10_000,
};

/** Node refuses a headers timeout longer than the request timeout, which includes the headers. */
export function checkEdge(config: { headersTimeoutMs: number; requestTimeoutMs: number }, ctx: z.RefinementCtx): void {
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    ctx.addIssue({ code: 'custom', path: ['headersTimeoutMs'], message: 'must not exceed requestTimeoutMs' });
  }
}
