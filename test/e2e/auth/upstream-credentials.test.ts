import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import type { RecordedRequest } from '../../support/recording-proxy.js';
import type { ShimProcess } from '../../support/shim-process.js';

const CLIENT_TOKEN = 'client-token-for-the-shim-only-0001';
const UPSTREAM_CREDENTIAL = 'Bearer upstream-credential-of-the-shim';
const dir = mkdtempSync(join(tmpdir(), 'mts-upstream-creds-'));
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [CLIENT_TOKEN]: 'alice' }));
const headersFile = join(dir, 'upstream-headers.json');
writeFileSync(headersFile, JSON.stringify({ 'X-Upstream-Key': 'key-from-file' }));

const stack = useStack({ stores: [], record: true });

describe('credentials toward the upstream come from the shim’s configuration', () => {
  let shim: ShimProcess;
  beforeAll(async () => {
    shim = await stack.startShim({
      args: ['--tokens', tokensFile, '--upstream-headers-file', headersFile],
      env: { SHIM_UPSTREAM_HEADERS: JSON.stringify({ Authorization: UPSTREAM_CREDENTIAL }) },
    });
  });

  const sent = (predicate: (r: RecordedRequest) => boolean): RecordedRequest[] => stack.recorder.requests.filter(predicate);
  const carriesConfigured = (r: RecordedRequest): boolean => r.headers.authorization === UPSTREAM_CREDENTIAL && r.headers['x-upstream-key'] === 'key-from-file';
  const byMethod = (method: string) => (r: RecordedRequest) => r.messages.some((m) => m.method === method);

  it('sends the configured headers on task execution, session initialize, rewrites, passthrough, streams and DELETE, and never the client’s token', async () => {
    const modern = new Sep2663Client(shim.url, { token: CLIENT_TOKEN });
    // `auto`: the call runs as a task through the execution pool and answers plainly when quick.
    expect((await modern.callTool('slow_compute', { seconds: 0.2 })).body.result.resultType).toBe('complete');

    const session = await LegacySession.open(shim.url, { token: CLIENT_TOKEN });
    await session.result('tools/list');
    await session.result('ping');
    const stream = session.openGetStream();
    await stream.next((e) => e.id !== undefined);
    await pollUntil(async () => sent((r) => r.method === 'GET'), (found) => found.length > 0);
    stream.close();
    expect((await session.delete()).status).toBe(200);
    await pollUntil(async () => sent((r) => r.method === 'DELETE'), (found) => found.length > 0);

    const groups: Record<string, RecordedRequest[]> = {
      'task execution (tools/call)': sent((r) => r.messages.some((m) => m.method === 'tools/call' && m.params?.name === 'slow_compute')),
      'legacy initialize': sent((r) => byMethod('initialize')(r) && r.messages.some((m) => (m.params?.clientInfo as { name?: string })?.name === 'legacy-raw-client')),
      'legacy tools/list rewrite': sent(byMethod('tools/list')),
      'legacy passthrough (notifications/initialized, ping)': sent((r) => byMethod('notifications/initialized')(r) || byMethod('ping')(r)),
      'upstream GET stream relay': sent((r) => r.method === 'GET'),
      'session DELETE': sent((r) => r.method === 'DELETE'),
    };
    for (const [what, requests] of Object.entries(groups)) {
      expect(requests.length, what).toBeGreaterThan(0);
      for (const r of requests) expect(carriesConfigured(r), `${what}: ${JSON.stringify(r.headers)}`).toBe(true);
    }
    expect(stack.recorder.requests.every(carriesConfigured)).toBe(true);
    expect(JSON.stringify(stack.recorder.requests)).not.toContain(CLIENT_TOKEN);
  });

  it('replaces a header of the client’s own with the configured one on passthrough', async () => {
    const session = await LegacySession.open(shim.url, { token: CLIENT_TOKEN });
    const before = stack.recorder.requests.length;
    const reply = await session.post({ jsonrpc: '2.0', id: 'p1', method: 'ping' }, { 'x-upstream-key': 'client-chosen-key' });
    expect(reply.status).toBe(200);
    const ping = stack.recorder.requests.slice(before).find(byMethod('ping'));
    expect(ping?.headers['x-upstream-key']).toBe('key-from-file');
    expect(ping?.headers.authorization).toBe(UPSTREAM_CREDENTIAL);
  });
});
