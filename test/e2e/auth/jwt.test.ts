import { base64url, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { Sep2663Client, textOf, type Reply } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { hsKey, nowS, rsaKey, SECRET, sign, writeJwks, type RsaKey } from '../../http/auth/support.js';

const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const stack = useStack({ stores: [] });

function expect401(reply: Reply, challenge: string, token?: string): void {
  expect(reply.status).toBe(401);
  expect(reply.headers.get('www-authenticate')).toBe(challenge);
  expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  if (token) expect(reply.text).not.toContain(token);
}

const INVALID = 'Bearer error="invalid_token"';

describe('JWT bearer tokens, HS256', () => {
  let shim: ShimProcess;
  beforeAll(async () => {
    shim = await stack.startShim({ env: { SHIM_AUTH: 'jwt', SHIM_JWT_SECRET: SECRET } });
  });
  const client = (token?: string): Sep2663Client => new Sep2663Client(shim.url, token ? { token } : {});

  it('serves a request with a valid token', async () => {
    const reply = await client(await sign(hsKey(), 'HS256', { sub: 'alice' })).callTool('greet', { name: 'JWT' });
    expect(reply.status).toBe(200);
    expect(textOf(reply.body.result)).toMatch(/JWT/);
  });

  it('answers 401 with a bare Bearer challenge when no token is sent', async () => {
    expect401(await client().request('server/discover'), 'Bearer');
  });

  it('answers 401 invalid_token for a wrong signature, alg none, a future nbf or a missing principal claim', async () => {
    const wrongKey = await sign(hsKey('another-secret-that-is-also-32-bytes-long'), 'HS256');
    const none = new UnsecuredJWT({ sub: 'alice', exp: nowS() + 3600 }).encode();
    const notYet = await sign(hsKey(), 'HS256', { nbf: nowS() + 600 });
    const noSub = await sign(hsKey(), 'HS256', { sub: undefined });
    for (const token of [wrongKey, none, notYet, noSub]) expect401(await client(token).request('server/discover'), INVALID, token);
  });

  it('answers 401 invalid_token saying only that an expired token expired', async () => {
    const expired = await sign(hsKey(), 'HS256', { exp: nowS() - 3600 });
    const reply = await client(expired).request('server/discover');
    expect401(reply, 'Bearer error="invalid_token", error_description="The token expired"', expired);
  });

  it('answers another subject’s task exactly as an unknown one (-32602), on both wires', async () => {
    const alice = client(await sign(hsKey(), 'HS256', { sub: 'alice' }));
    const bob = client(await sign(hsKey(), 'HS256', { sub: 'bob' }));
    const created = await alice.createTask('slow_compute', { seconds: 30 });
    const foreign = await bob.getTask(created.taskId, { id: 1 });
    const unknown = await bob.getTask(UNKNOWN_ID, { id: 1 });
    expect(foreign.body.error.code).toBe(-32602);
    expect(foreign.text).toBe(unknown.text);
    expect(foreign.status).toBe(unknown.status);

    const bobLegacy = await LegacySession.open(shim.url, { token: await sign(hsKey(), 'HS256', { sub: 'bob' }) });
    const legacyForeign = await bobLegacy.request('tasks/get', { taskId: created.taskId });
    const legacyUnknown = await bobLegacy.request('tasks/get', { taskId: UNKNOWN_ID });
    expect(legacyForeign.error).toEqual(legacyUnknown.error);
    expect(legacyForeign.error.code).toBe(-32602);

    // A fresh token of the same subject is the same principal.
    const aliceAgain = client(await sign(hsKey(), 'HS256', { sub: 'alice', iat: nowS() - 1 }));
    expect((await aliceAgain.result('tasks/get', { taskId: created.taskId })).status).toBe('working');
    await alice.cancelTask(created.taskId);
  });

  it('refuses an RS256 token', async () => {
    const key = await rsaKey('k');
    const token = await sign(key.privateKey, 'RS256', {}, { kid: 'k' });
    expect401(await client(token).request('server/discover'), INVALID, token);
  });
});

describe('JWT bearer tokens, RS256 from a JWKS file, with issuer, audience and a custom principal claim', () => {
  let shim: ShimProcess;
  let one: RsaKey;
  let two: RsaKey;
  const ISS = 'https://idp.example';
  const AUD = 'mcp-shim';
  beforeAll(async () => {
    [one, two] = await Promise.all([rsaKey('key-1'), rsaKey('key-2')]);
    shim = await stack.startShim({
      args: ['--auth', 'jwt', '--jwks', writeJwks([one.publicJwk, two.publicJwk]), '--jwt-issuer', ISS, '--jwt-audience', AUD, '--jwt-principal-claim', 'client_id'],
    });
  });
  const client = (token: string): Sep2663Client => new Sep2663Client(shim.url, { token });
  const token = (key: RsaKey, claims: Record<string, unknown> = {}): Promise<string> =>
    sign(key.privateKey, 'RS256', { iss: ISS, aud: AUD, client_id: 'ci-bot', ...claims }, { kid: key.kid });

  it('verifies tokens of either key, chosen by kid', async () => {
    for (const key of [one, two]) {
      const reply = await client(await token(key)).request('server/discover');
      expect(reply.status, key.kid).toBe(200);
    }
  });

  it('answers 401 for a wrong issuer, a wrong audience, an HS256 token or a token signed by the other key', async () => {
    const tokens = [
      await token(one, { iss: 'https://evil.example' }),
      await token(one, { aud: 'another-service' }),
      await sign(hsKey(), 'HS256', { iss: ISS, aud: AUD, client_id: 'ci-bot' }, { kid: 'key-1' }),
      await sign(two.privateKey, 'RS256', { iss: ISS, aud: AUD, client_id: 'ci-bot' }, { kid: 'key-1' }),
      await sign(one.privateKey, 'RS256', { iss: ISS, aud: AUD, client_id: 'ci-bot' }),
    ];
    for (const t of tokens) expect401(await client(t).request('server/discover'), INVALID, t);
  });

  it('answers 401 when the configured claim is missing, even with a sub', async () => {
    const t = await token(one, { client_id: undefined, sub: 'ci-bot' });
    expect401(await client(t).request('server/discover'), INVALID, t);
  });

  it('binds tasks to the configured claim, not to sub', async () => {
    const created = await client(await token(one, { sub: 'first-run' })).createTask('slow_compute', { seconds: 30 });
    const sameClient = client(await token(two, { sub: 'second-run' }));
    expect((await sameClient.result('tasks/get', { taskId: created.taskId })).status).toBe('working');
    const otherClient = client(await token(one, { sub: 'first-run', client_id: 'another-bot' }));
    const foreign = await otherClient.getTask(created.taskId, { id: 1 });
    const unknown = await otherClient.getTask(UNKNOWN_ID, { id: 1 });
    expect(foreign.body.error.code).toBe(-32602);
    expect(foreign.text).toBe(unknown.text);
    await sameClient.cancelTask(created.taskId);
  });

  it('refuses a token whose signature was moved onto another payload', async () => {
    const [header, , signature] = (await token(one)).split('.');
    const forged = `${header}.${base64url.encode(JSON.stringify({ iss: ISS, aud: AUD, client_id: 'admin', exp: nowS() + 3600 }))}.${signature}`;
    expect401(await client(forged).request('server/discover'), INVALID, forged);
  });
});
