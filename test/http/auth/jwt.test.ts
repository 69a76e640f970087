import { base64url, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JwtAuthConfig } from '../../../src/config/auth-schema.js';
import type { Authenticator } from '../../../src/http/auth/bearer.js';
import { createAuthenticator } from '../../../src/http/auth/authenticator.js';
import { bearer, hsKey, nowS, rsaKey, SECRET, sign, writeJwks, type RsaKey } from './support.js';

const BASE = { mode: 'jwt', principalClaim: 'sub', clockToleranceMs: 30_000 } as const;

function hs256(extra: Partial<JwtAuthConfig> = {}): Promise<Authenticator> {
  return createAuthenticator({ ...BASE, key: { algorithm: 'HS256', secret: SECRET }, ...extra } as JwtAuthConfig);
}

describe('JWT authentication, HS256', () => {
  let auth: Authenticator;
  beforeAll(async () => {
    auth = await hs256();
  });

  it('binds a valid token to its sub claim', async () => {
    expect(await auth(bearer(await sign(hsKey(), 'HS256', { sub: 'alice' })))).toEqual({ principal: 'alice' });
  });

  it('answers missing without an Authorization header, invalid for another scheme', async () => {
    expect(await auth({})).toEqual({ rejected: 'missing' });
    expect(await auth({ authorization: 'Basic YWxpY2U6c2VjcmV0' })).toEqual({ rejected: 'invalid' });
  });

  it('refuses an expired token as expired, and accepts one within the clock tolerance', async () => {
    expect(await auth(bearer(await sign(hsKey(), 'HS256', { exp: nowS() - 60 })))).toEqual({ rejected: 'expired' });
    expect(await auth(bearer(await sign(hsKey(), 'HS256', { exp: nowS() - 5 })))).toEqual({ principal: 'alice' });
  });

  it('refuses a token whose nbf is beyond the clock tolerance', async () => {
    expect(await auth(bearer(await sign(hsKey(), 'HS256', { nbf: nowS() + 120 })))).toEqual({ rejected: 'invalid' });
  });

  it('refuses a token without exp', async () => {
    expect(await auth(bearer(await sign(hsKey(), 'HS256', { exp: undefined })))).toEqual({ rejected: 'invalid' });
  });

  it('refuses a token signed with another secret', async () => {
    expect(await auth(bearer(await sign(hsKey('another-secret-that-is-also-32-bytes-long'), 'HS256')))).toEqual({ rejected: 'invalid' });
  });

  it('refuses alg none, with or without a signature', async () => {
    const unsecured = new UnsecuredJWT({ sub: 'alice', exp: nowS() + 3600 }).encode();
    expect(await auth(bearer(unsecured))).toEqual({ rejected: 'invalid' });
    const [, payload] = (await sign(hsKey(), 'HS256')).split('.');
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    expect(await auth(bearer(`${header}.${payload}.`))).toEqual({ rejected: 'invalid' });
  });

  it('refuses a payload altered after signing', async () => {
    const [header, , signature] = (await sign(hsKey(), 'HS256', { sub: 'alice' })).split('.');
    const forged = base64url.encode(JSON.stringify({ sub: 'mallory', exp: nowS() + 3600 }));
    expect(await auth(bearer(`${header}.${forged}.${signature}`))).toEqual({ rejected: 'invalid' });
  });

  it('refuses garbage that is not a JWT', async () => {
    expect(await auth(bearer('not-a-jwt'))).toEqual({ rejected: 'invalid' });
    expect(await auth(bearer('a.b.c'))).toEqual({ rejected: 'invalid' });
  });

  it('refuses a token whose principal claim is missing, empty or not a string', async () => {
    for (const sub of [undefined, '', 42, ['alice'], { id: 'alice' }]) {
      expect(await auth(bearer(await sign(hsKey(), 'HS256', { sub })))).toEqual({ rejected: 'invalid' });
    }
  });

  it('takes the principal from a configured claim', async () => {
    const custom = await hs256({ principalClaim: 'client_id' });
    expect(await custom(bearer(await sign(hsKey(), 'HS256', { sub: 'ignored', client_id: 'ci-bot' })))).toEqual({ principal: 'ci-bot' });
    expect(await custom(bearer(await sign(hsKey(), 'HS256', { sub: 'alice' })))).toEqual({ rejected: 'invalid' });
  });

  it('checks issuer and audience when configured', async () => {
    const strict = await hs256({ issuer: 'https://idp.example', audience: 'mcp-shim' });
    const good = { iss: 'https://idp.example', aud: 'mcp-shim' };
    expect(await strict(bearer(await sign(hsKey(), 'HS256', good)))).toEqual({ principal: 'alice' });
    expect(await strict(bearer(await sign(hsKey(), 'HS256', { ...good, aud: ['other', 'mcp-shim'] })))).toEqual({ principal: 'alice' });
    expect(await strict(bearer(await sign(hsKey(), 'HS256', { ...good, iss: 'https://evil.example' })))).toEqual({ rejected: 'invalid' });
    expect(await strict(bearer(await sign(hsKey(), 'HS256', { ...good, aud: 'another-service' })))).toEqual({ rejected: 'invalid' });
    expect(await strict(bearer(await sign(hsKey(), 'HS256', { iss: good.iss })))).toEqual({ rejected: 'invalid' });
  });

  it('answers a token it verified before without waiting (a bounded cache)', async () => {
    const headers = bearer(await sign(hsKey(), 'HS256', { sub: 'cached' }));
    const first = auth(headers);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual({ principal: 'cached' });
    expect(auth(headers)).toEqual({ principal: 'cached' });
  });

  it('never caches a refused token', async () => {
    const headers = bearer(await sign(hsKey('another-secret-that-is-also-32-bytes-long'), 'HS256'));
    expect(await auth(headers)).toEqual({ rejected: 'invalid' });
    expect(auth(headers)).toBeInstanceOf(Promise);
  });
});

describe('JWT authentication, RS256 with a local JWKS', () => {
  let one: RsaKey;
  let two: RsaKey;
  let auth: Authenticator;
  beforeAll(async () => {
    [one, two] = await Promise.all([rsaKey('key-1'), rsaKey('key-2')]);
    auth = await createAuthenticator({ ...BASE, key: { algorithm: 'RS256', jwksFile: writeJwks([one.publicJwk, two.publicJwk]) } });
  });

  it('verifies each token with the key its kid names', async () => {
    expect(await auth(bearer(await sign(one.privateKey, 'RS256', { sub: 'a' }, { kid: 'key-1' })))).toEqual({ principal: 'a' });
    expect(await auth(bearer(await sign(two.privateKey, 'RS256', { sub: 'b' }, { kid: 'key-2' })))).toEqual({ principal: 'b' });
  });

  it('refuses a token signed by another key than its kid names, an unknown kid, or no kid among two keys', async () => {
    expect(await auth(bearer(await sign(two.privateKey, 'RS256', {}, { kid: 'key-1' })))).toEqual({ rejected: 'invalid' });
    expect(await auth(bearer(await sign(one.privateKey, 'RS256', {}, { kid: 'key-3' })))).toEqual({ rejected: 'invalid' });
    expect(await auth(bearer(await sign(one.privateKey, 'RS256')))).toEqual({ rejected: 'invalid' });
  });

  it('refuses an HS256 token, also one whose MAC key is the public key itself (algorithm confusion)', async () => {
    expect(await auth(bearer(await sign(hsKey(), 'HS256', {}, { kid: 'key-1' })))).toEqual({ rejected: 'invalid' });
    const publicBytes = new TextEncoder().encode(JSON.stringify(one.publicJwk));
    expect(await auth(bearer(await sign(publicBytes, 'HS256', {}, { kid: 'key-1' })))).toEqual({ rejected: 'invalid' });
    expect(await auth(bearer(await sign(base64url.decode(one.publicJwk.n as string), 'HS256', {}, { kid: 'key-1' })))).toEqual({ rejected: 'invalid' });
  });

  it('accepts a token without kid when the file holds a single key', async () => {
    const { kid: _kid, ...withoutKid } = one.publicJwk;
    const single = await createAuthenticator({ ...BASE, key: { algorithm: 'RS256', jwksFile: writeJwks([withoutKid]) } });
    expect(await single(bearer(await sign(one.privateKey, 'RS256', { sub: 'solo' })))).toEqual({ principal: 'solo' });
    expect(await single(bearer(await sign(two.privateKey, 'RS256', { sub: 'solo' })))).toEqual({ rejected: 'invalid' });
  });

  it('an HS256 configuration refuses an RS256 token', async () => {
    const hs = await hs256();
    expect(await hs(bearer(await sign(one.privateKey, 'RS256', {}, { kid: 'key-1' })))).toEqual({ rejected: 'invalid' });
  });
});
