import type { IncomingHttpHeaders } from 'node:http';

/**
 * The outcome of authenticating one request: its principal, or why it gets 401. `missing`: no
 * credential at all; `invalid`: one was presented and refused; `expired`: a genuine token whose
 * time is up (the client should fetch a new one, and saying so tells an attacker nothing).
 */
export type AuthOutcome = { principal: string } | { rejected: 'missing' | 'invalid' | 'expired' };

/**
 * Synchronous when the answer is at hand (no auth, a tokens file, a recently verified JWT).
 * `peer`: the socket's remote address, for `none` mode's per-address principals.
 */
export type Authenticator = (headers: IncomingHttpHeaders, peer?: string) => AuthOutcome | Promise<AuthOutcome>;

export const MISSING: AuthOutcome = { rejected: 'missing' };
export const INVALID: AuthOutcome = { rejected: 'invalid' };
export const EXPIRED: AuthOutcome = { rejected: 'expired' };

/** The token of `Authorization: Bearer <token>`; `null` for an Authorization header of another form. */
export function bearerToken(headers: IncomingHttpHeaders): string | null | undefined {
  const header = headers.authorization;
  if (header === undefined) return undefined;
  return /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? null;
}
