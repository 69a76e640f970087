import { errors, importJWK, jwtVerify, type CryptoKey, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { JwtAuthConfig } from '../../config/auth-schema.js';
import { readJwksFile } from '../../config/jwks-file.js';
import { bearerToken, EXPIRED, INVALID, MISSING, type Authenticator, type AuthOutcome } from './bearer.js';
import { VerifiedTokenCache } from './verified-cache.js';

const CACHE_ENTRIES = 10_000;
const CACHE_MAX_AGE_MS = 5 * 60_000;

/**
 * Bearer JWTs verified with local key material only, imported once here. Exactly one algorithm
 * is accepted (`alg: none` and HS256-signed-with-the-public-key never verify); `exp` is required,
 * `nbf`, issuer and audience are checked when present or configured; the principal is one claim,
 * a non-empty string.
 */
export async function jwtAuthenticator(config: JwtAuthConfig): Promise<Authenticator> {
  const key = await verificationKey(config.key);
  const options: JWTVerifyOptions = {
    algorithms: [config.key.algorithm],
    clockTolerance: config.clockToleranceMs / 1000,
    requiredClaims: ['exp'],
    ...(config.issuer !== undefined ? { issuer: config.issuer } : {}),
    ...(config.audience !== undefined ? { audience: config.audience } : {}),
  };
  const cache = new VerifiedTokenCache(CACHE_ENTRIES, CACHE_MAX_AGE_MS);

  async function verify(token: string): Promise<AuthOutcome> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, options));
    } catch (err) {
      if (err instanceof errors.JWTExpired) return EXPIRED;
      if (err instanceof errors.JOSEError || err instanceof TypeError) return INVALID;
      throw err;
    }
    const principal = payload[config.principalClaim];
    if (typeof principal !== 'string' || principal === '') return INVALID;
    cache.set(token, principal, (payload.exp as number) * 1000, Date.now());
    return { principal };
  }

  return (headers) => {
    const token = bearerToken(headers);
    if (token === undefined) return MISSING;
    if (token === null) return INVALID;
    const principal = cache.get(token, Date.now());
    return principal === undefined ? verify(token) : { principal };
  };
}

async function verificationKey(key: JwtAuthConfig['key']): Promise<CryptoKey | JWTVerifyGetKey> {
  if (key.algorithm === 'HS256') {
    return crypto.subtle.importKey('raw', new TextEncoder().encode(key.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  }
  const keys = await Promise.all(
    readJwksFile(key.jwksFile).map(async ({ kid, jwk }) => ({ kid, key: (await importJWK(jwk, 'RS256')) as CryptoKey })),
  );
  const byKid = new Map(keys.map((k) => [k.kid, k.key]));
  const only = keys.length === 1 ? keys[0]?.key : undefined;
  // A token names its key by kid; without one it can only mean the file's single key.
  return (header) => {
    const found = header.kid === undefined ? only : byKid.get(header.kid);
    if (!found) throw new errors.JWKSNoMatchingKey();
    return found;
  };
}
