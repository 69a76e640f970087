import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { writeTokensFile } from '../../support/observe.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { rsaKey, sign, writeJwks } from '../../http/auth/support.js';

const stack = useStack({ stores: [] });

const OLD = 'old-token-of-team-a-0123456789';
const NEW = 'new-token-of-team-a-9876543210';

function waitForStderr(shim: ShimProcess, pattern: RegExp, count = 1): Promise<string> {
  const global = new RegExp(pattern.source, 'g');
  return pollUntil(async () => shim.stderr(), (text) => (text.match(global)?.length ?? 0) >= count, { timeoutMs: 10_000 });
}

const status = async (url: string, token: string): Promise<number> => (await new Sep2663Client(url, { token }).request('ping')).status;

describe('key material reloaded on SIGHUP', () => {
  it('takes a rotated tokens file, keeps the old one when the new one is bad, and never prints a token', async () => {
    const path = writeTokensFile({ [OLD]: 'team-a' });
    const shim = await stack.startShim({ store: 'embedded', args: ['--tokens', path] });
    expect(await status(shim.url, OLD)).toBe(200);
    expect(await status(shim.url, NEW)).toBe(401);

    // A bad file (a token too short) keeps the running tokens.
    writeFileSync(path, JSON.stringify({ tooShort7: 'team-a' }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /SIGHUP: reload refused, the running configuration stays: invalid configuration:\n {2}- tokens file .*: the token of principal 'team-a' is shorter than 16 characters/);
    expect(await status(shim.url, OLD)).toBe(200);

    writeFileSync(path, JSON.stringify({ [NEW]: 'team-a' }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, new RegExp(`SIGHUP: configuration reloaded:\\n {2}- auth: mode tokens, tokens file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} re-read`));
    expect(await status(shim.url, NEW)).toBe(200);
    expect(await status(shim.url, OLD)).toBe(401);
    for (const token of [OLD, NEW, 'tooShort7']) expect(shim.stderr()).not.toContain(token);
  });

  it('takes a rotated JWKS file', async () => {
    const [before, after] = await Promise.all([rsaKey('2026-05'), rsaKey('2026-08')]);
    const path = writeJwks([before.publicJwk]);
    const shim = await stack.startShim({ store: 'embedded', args: ['--jwks', path] });
    const oldToken = await sign(before.privateKey, 'RS256', { sub: 'svc' }, { kid: before.kid });
    const newToken = await sign(after.privateKey, 'RS256', { sub: 'svc' }, { kid: after.kid });
    expect(await status(shim.url, oldToken)).toBe(200);
    expect(await status(shim.url, newToken)).toBe(401);

    writeFileSync(path, JSON.stringify({ keys: [after.publicJwk] }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /- auth: mode jwt \(RS256\), JWKS file .* re-read/);
    expect(await status(shim.url, newToken)).toBe(200);
    // The reload starts a new verified-token cache: a token of the dropped key is refused at once, even one verified before.
    expect(await status(shim.url, oldToken)).toBe(401);
  });
});
