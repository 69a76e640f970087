import type { AuthConfig } from '../../config/auth-schema.js';
import { clientAddress } from '../client-address.js';
import type { Authenticator } from './bearer.js';
import { jwtAuthenticator } from './jwt.js';
import { tokensAuthenticator } from './tokens.js';

const ANONYMOUS = 'anonymous';

/** Who `none` mode's clients are: one shared principal, or one per client address (docs/security.md). */
export type AnonymousPrincipal = 'shared' | 'per-address';

export interface AnonymousOptions {
  anonymousPrincipal: AnonymousPrincipal;
  /** The client address is the last `X-Forwarded-For` entry (a proxy in front appended it). */
  trustProxy: boolean;
}

/** The authenticator of the configured mode; key material is read and imported here, once. */
export async function createAuthenticator(
  auth: AuthConfig,
  anonymous: AnonymousOptions = { anonymousPrincipal: 'shared', trustProxy: false },
): Promise<Authenticator> {
  switch (auth.mode) {
    case 'none': {
      if (anonymous.anonymousPrincipal === 'shared') return () => ({ principal: ANONYMOUS });
      const { trustProxy } = anonymous;
      return (headers, peer) => ({ principal: `${ANONYMOUS}@${clientAddress(headers, peer, trustProxy)}` });
    }
    case 'tokens':
      return tokensAuthenticator(auth.tokensFile);
    case 'jwt':
      return jwtAuthenticator(auth);
  }
}
