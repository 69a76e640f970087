import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { rsaKey, writeJwks, type RsaKey } from './support.js';
import { configProblems as problems, writeIn } from '../../support/config-problems.js';

const dir = mkdtempSync(join(tmpdir(), 'mts-auth-config-'));
const SECRET = 'x'.repeat(32);

const file = (name: string, content: string): string => writeIn(dir, name, content);

function auth(argv: string[], env: Record<string, string> = {}): unknown {
  return loadConfig({ argv, env }).config.auth;
}

describe('auth configuration', () => {
  let key: RsaKey;
  let jwks: string;
  const tokens = file('tokens.json', JSON.stringify({ 'a-token-of-sixteen-chars': 'alice' }));
  beforeAll(async () => {
    key = await rsaKey('k1');
    jwks = writeJwks([key.publicJwk]);
  });

  it('is none by default, tokens with a tokens file, jwt with JWT key material', () => {
    expect(auth([])).toEqual({ mode: 'none' });
    expect(auth(['--tokens', tokens])).toEqual({ mode: 'tokens', tokensFile: tokens });
    expect(auth([], { SHIM_JWT_SECRET: SECRET })).toEqual({
      mode: 'jwt',
      key: { algorithm: 'HS256', secret: SECRET },
      principalClaim: 'sub',
      clockToleranceMs: 30_000,
    });
  });

  it('reads every JWT setting from the environment and from flags (flags win)', () => {
    expect(
      auth(['--auth', 'jwt', '--jwks', jwks, '--jwt-issuer', 'https://idp.example'], {
        SHIM_AUTH: 'none',
        SHIM_JWT_PRINCIPAL_CLAIM: 'client_id',
        SHIM_JWT_ISSUER: 'https://ignored.example',
        SHIM_JWT_AUDIENCE: 'mcp-shim',
        SHIM_JWT_CLOCK_TOLERANCE_MS: '5000',
      }),
    ).toEqual({
      mode: 'jwt',
      key: { algorithm: 'RS256', jwksFile: jwks },
      principalClaim: 'client_id',
      issuer: 'https://idp.example',
      audience: 'mcp-shim',
      clockToleranceMs: 5_000,
    });
    expect(auth(['--jwt-principal-claim', 'azp'], { SHIM_JWT_SECRET: SECRET, SHIM_JWT_PRINCIPAL_CLAIM: 'client_id' })).toMatchObject({ principalClaim: 'azp' });
  });

  it('reads the HS256 secret from a file without its final newline', () => {
    const path = file('secret.txt', `${SECRET}\n`);
    expect(auth(['--jwt-secret-file', path])).toMatchObject({ key: { algorithm: 'HS256', secret: SECRET } });
    expect(auth([], { SHIM_JWT_SECRET_FILE: path })).toMatchObject({ key: { algorithm: 'HS256', secret: SECRET } });
  });

  it('refuses an HS256 secret shorter than 32 bytes, without printing it', () => {
    const found = problems([], { SHIM_JWT_SECRET: 'short-secret-value' });
    expect(found).toEqual(['SHIM_JWT_SECRET: the HS256 secret must be at least 32 bytes']);
    expect(found.join('\n')).not.toContain('short-secret-value');
    expect(problems(['--jwt-secret-file', file('short.txt', 'tiny\n')])).toEqual([`--jwt-secret-file ${join(dir, 'short.txt')}: the HS256 secret must be at least 32 bytes`]);
  });

  it('refuses both a secret and a JWKS, two secrets, or jwt without key material', () => {
    expect(problems([], { SHIM_JWT_SECRET: SECRET, SHIM_JWKS_FILE: jwks })).toEqual([
      'SHIM_JWT_SECRET and SHIM_JWKS_FILE are both set: auth mode jwt takes one key source (one algorithm)',
    ]);
    expect(problems(['--jwt-secret-file', file('s2.txt', SECRET)], { SHIM_JWT_SECRET: SECRET })).toEqual([
      'SHIM_JWT_SECRET and --jwt-secret-file are both set: auth mode jwt takes one key source (one algorithm)',
    ]);
    expect(problems(['--auth', 'jwt'])).toEqual([
      'auth mode jwt needs SHIM_JWT_SECRET or SHIM_JWT_SECRET_FILE (--jwt-secret-file) for HS256, or SHIM_JWKS_FILE (--jwks) for RS256',
    ]);
  });

  it('refuses an unknown mode, and settings that do not apply to the chosen mode', () => {
    expect(problems([], { SHIM_AUTH: 'oauth' })).toEqual(['SHIM_AUTH: expected none, tokens or jwt, got "oauth"']);
    expect(problems(['--auth', 'none', '--tokens', tokens])).toEqual(['--tokens does not apply to auth mode none']);
    expect(problems(['--auth', 'tokens', '--tokens', tokens], { SHIM_JWT_ISSUER: 'x' })).toEqual(['SHIM_JWT_ISSUER does not apply to auth mode tokens']);
    expect(problems(['--tokens', tokens], { SHIM_JWKS_FILE: jwks })).toEqual([
      '--tokens and SHIM_JWKS_FILE are both set: choose one with --auth or SHIM_AUTH',
    ]);
    expect(problems(['--auth', 'tokens'])).toEqual(['auth mode tokens needs --tokens FILE or SHIM_TOKENS_FILE']);
    expect(problems(['--jwt-audience', 'mcp'])).toEqual(['--jwt-audience does not apply to auth mode none']);
  });

  it('refuses a JWKS file that is missing, not JSON, or holds no usable RS256 key', async () => {
    expect(problems(['--jwks', join(dir, 'absent.json')])).toEqual([`JWKS file ${join(dir, 'absent.json')}: cannot read (ENOENT)`]);
    const broken = file('broken-jwks.json', '{"keys": [');
    expect(problems(['--jwks', broken])[0]).toMatch(/^JWKS file .*broken-jwks\.json: not JSON/);
    const notSet = file('not-a-set.json', JSON.stringify([key.publicJwk]));
    expect(problems(['--jwks', notSet])).toEqual([`JWKS file ${notSet}: expected {"keys": [...]}`]);
    const ecOnly = file('ec.json', JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'ec' }] }));
    expect(problems(['--jwks', ecOnly])).toEqual([`JWKS file ${ecOnly}: no RS256 signing key (kty RSA, alg RS256 or none, use sig or none)`]);
    const bad = file('bad-n.json', JSON.stringify({ keys: [{ ...key.publicJwk, n: 'AQAB' }] }));
    expect(problems(['--jwks', bad])).toEqual([`JWKS file ${bad}: key 'k1': RS256 needs a key of at least 2048 bits`]);
    const other = await rsaKey('k2');
    const { kid: _kid, ...noKid } = other.publicJwk;
    const ambiguous = writeJwks([key.publicJwk, noKid]);
    expect(problems(['--jwks', ambiguous])).toEqual([`JWKS file ${ambiguous}: with more than one key, every key needs a kid`]);
    const twice = writeJwks([key.publicJwk, { ...other.publicJwk, kid: 'k1' }]);
    expect(problems(['--jwks', twice])).toEqual([`JWKS file ${twice}: kid 'k1' is used by more than one key`]);
  });

  it('uses only the public part of a JWKS entry that holds a private key', async () => {
    const { exportJWK, generateKeyPair } = await import('jose');
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const path = writeJwks([{ ...(await exportJWK(privateKey)), kid: 'with-private' }]);
    expect(auth(['--jwks', path])).toMatchObject({ key: { algorithm: 'RS256', jwksFile: path } });
  });

  it('skips keys for other algorithms or uses, keeping the RS256 signing key', () => {
    const path = writeJwks([{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'ec' }, { ...key.publicJwk, kid: 'enc', use: 'enc' }, key.publicJwk]);
    expect(problems(['--jwks', path])).toEqual([]);
  });

  it('refuses a clock tolerance that is not a whole number or above 5 minutes', () => {
    expect(problems([], { SHIM_JWT_SECRET: SECRET, SHIM_JWT_CLOCK_TOLERANCE_MS: 'soon' })).toEqual(['SHIM_JWT_CLOCK_TOLERANCE_MS: expected a whole number, got "soon"']);
    expect(problems([], { SHIM_JWT_SECRET: SECRET, SHIM_JWT_CLOCK_TOLERANCE_MS: '600000' })[0]).toMatch(/^auth\.clockToleranceMs: /);
  });
});

describe('tokens file problems', () => {
  it('a tokens file that is not JSON is reported without quoting its text', () => {
    const path = file('broken-tokens.json', '{"leaky-secret-token-value": alice}');
    const found = problems(['--tokens', path]);
    expect(found).toEqual([`tokens file ${path}: not JSON`]);
  });
});
