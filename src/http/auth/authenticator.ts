import type { AuthConfig } from '../../config/auth-schema.js';
import type { Authenticator } from './bearer.js';
import { jwtAuthenticator } from './jwt.js';
import { tokensAuthenticator } from './tokens.js';

export const ANONYMOUS = 'anonymous';

/** The authenticator of the configured mode; key material is read and imported here, once. */
export async function createAuthenticator(auth: AuthConfig): Promise<Authenticator> {
  switch (auth.mode) {
    case 'none':
      return () => ({ principal: ANONYMOUS });
    case 'tokens':
      return tokensAuthenticator(auth.tokensFile);
    case 'jwt':
      return jwtAuthenticator(auth);
  }
}
