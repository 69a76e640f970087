import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export const SECRET = 'an-hs256-secret-of-at-least-32-bytes!!';

export interface RsaKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function rsaKey(kid: string): Promise<RsaKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Writes `{"keys": [...]}` to a fresh temp directory and returns its path. */
export function writeJwks(keys: JWK[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mts-jwks-')), 'jwks.json');
  writeFileSync(path, JSON.stringify({ keys }));
  return path;
}

const nowS = (): number => Math.floor(Date.now() / 1000);

/** A signed JWT: `sub` and a one-hour `exp` unless the claims say otherwise (`undefined` drops a claim). */
export async function sign(
  key: CryptoKey | Uint8Array,
  alg: 'HS256' | 'RS256',
  claims: Record<string, unknown> = {},
  header: { kid?: string } = {},
): Promise<string> {
  const payload: JWTPayload = { sub: 'alice', iat: nowS(), exp: nowS() + 3600, ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT', ...header }).sign(key);
}

export const hsKey = (secret = SECRET): Uint8Array => new TextEncoder().encode(secret);

export const bearer = (token: string): IncomingHttpHeaders => ({ authorization: `Bearer ${token}` });

export { nowS };
