import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import type { ShimProcess } from '../../support/shim-process.js';

const stack = useStack({ stores: ['redis'] });
const TOKEN = 'dashboard-token-0123456789';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with headers fetch would not send as given (`Host` above all). */
function get(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const GUARDED = ['/metrics', '/dashboard', '/dashboard/app.js', '/dashboard/api/overview?range=1h', '/dashboard/api/clients'];

describe('without a dashboard token: loopback clients that name a loopback host', () => {
  it.each(GUARDED)('refuses %s with 403 when Host names another site (DNS rebinding)', async (path) => {
    const port = new URL(stack.shim().baseUrl).port;
    for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.attacker.example:${port}`, `localhost.attacker.example`, `[::2]:${port}`]) {
      const answer = await get(stack.shim().baseUrl, path, { host });
      expect(answer.status, host).toBe(403);
      expect(answer.body).not.toMatch(/mcp_shim_|clients|<html/i);
    }
  });

  it.each(GUARDED)('serves %s when Host is localhost, a 127.x address or [::1]', async (path) => {
    const port = new URL(stack.shim().baseUrl).port;
    for (const host of [`localhost:${port}`, `LOCALHOST:${port}`, `127.0.0.1:${port}`, `127.1.2.3:${port}`, `[::1]:${port}`, 'localhost']) {
      expect((await get(stack.shim().baseUrl, path, { host })).status, host).toBe(200);
    }
  });

  it('leaves /mcp and the health checks to their own rules', async () => {
    expect((await get(stack.shim().baseUrl, '/healthz', { host: 'attacker.example' })).status).toBe(200);
  });
});

describe('with a dashboard token', () => {
  let first: ShimProcess;
  let second: ShimProcess;
  let otherToken: ShimProcess;
  let proxied: ShimProcess;
  beforeAll(async () => {
    [first, second, otherToken, proxied] = await Promise.all([
      stack.startShim({ env: { SHIM_DASHBOARD_TOKEN: TOKEN } }),
      stack.startShim({ env: { SHIM_DASHBOARD_TOKEN: TOKEN } }),
      stack.startShim({ env: { SHIM_DASHBOARD_TOKEN: 'another-token-0123456789' } }),
      stack.startShim({ env: { SHIM_DASHBOARD_TOKEN: TOKEN }, args: ['--trust-proxy'] }),
    ]);
  });

  async function signIn(shim: ShimProcess, headers: Record<string, string> = {}): Promise<{ jar: string; setCookie: string }> {
    const answer = await get(shim.baseUrl, `/dashboard?token=${TOKEN}`, headers);
    expect(answer.status).toBe(303);
    const setCookie = String(answer.headers['set-cookie']);
    return { jar: setCookie.split(';')[0] as string, setCookie };
  }

  it('sets a cookie that holds a value derived from the token, not the token', async () => {
    const { jar } = await signIn(first);
    const value = jar.slice(jar.indexOf('=') + 1);
    expect(value).not.toContain(TOKEN);
    expect(decodeURIComponent(value)).not.toContain(TOKEN);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await get(first.baseUrl, '/dashboard', { cookie: jar })).status).toBe(200);
    // The token itself is no cookie: only the derived value is.
    expect((await get(first.baseUrl, '/dashboard', { cookie: `mts_dashboard=${TOKEN}` })).status).toBe(401);
  });

  it('accepts a cookie set by one replica on another replica with the same token, and not where the token differs', async () => {
    const { jar } = await signIn(first);
    expect((await get(second.baseUrl, '/dashboard', { cookie: jar })).status).toBe(200);
    expect((await get(second.baseUrl, '/dashboard/api/verdict', { cookie: jar })).status).toBe(200);
    expect((await get(otherToken.baseUrl, '/dashboard', { cookie: jar })).status).toBe(401);
  });

  it('refuses tokens and cookies of every other length and value', async () => {
    for (const guess of ['', 'd', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), 'x'.repeat(4_096)]) {
      expect((await get(first.baseUrl, '/metrics', { authorization: `Bearer ${guess}` })).status, guess).toBe(401);
      expect((await get(first.baseUrl, '/dashboard', { cookie: `mts_dashboard=${guess}` })).status, guess).toBe(401);
    }
    expect((await get(first.baseUrl, '/metrics', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it('marks the cookie Secure behind a TLS-terminating proxy only with --trust-proxy', async () => {
    expect((await signIn(proxied, { 'x-forwarded-proto': 'https' })).setCookie).toMatch(/;\s*Secure/i);
    expect((await signIn(proxied, { 'x-forwarded-proto': 'https, http' })).setCookie).toMatch(/;\s*Secure/i);
    expect((await signIn(proxied, { 'x-forwarded-proto': 'http' })).setCookie).not.toMatch(/Secure/i);
    expect((await signIn(proxied)).setCookie).not.toMatch(/Secure/i);
    // Without the setting the header is anyone's to send, and is ignored.
    expect((await signIn(first, { 'x-forwarded-proto': 'https' })).setCookie).not.toMatch(/Secure/i);
  });
});
