import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { waitForDashboard } from '../../support/observe.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

async function metric(baseUrl: string, name: string): Promise<number> {
  const families = parsePrometheusTextFormat(await (await fetch(`${baseUrl}/metrics`)).text());
  return Number(families.find((f) => f.name === name)?.metrics[0]?.value);
}

/**
 * Recording never fails a request: with Redis briefly down, requests that do not need it still
 * succeed, the replica keeps their counts in memory and counts the gap, and both reach the shared
 * aggregates once Redis is back.
 */
describe('traffic recording while Redis is briefly stopped', () => {
  let redis: RedisServer;
  let upstream: DemoUpstreamProcess;
  let shim: ShimProcess;

  beforeAll(async () => {
    // Persistence on, so that what was recorded before the outage survives the restart.
    [redis, upstream] = await Promise.all([startRedis({ appendonly: true }), spawnDemoUpstream(['--port', '0'])]);
    shim = await startShimProcess({ upstreamUrl: upstream.url, redisUrl: redis.url });
  });
  afterAll(async () => {
    await shim?.stop();
    upstream?.killGroup();
    await upstream?.exited;
    await redis?.stop();
  });

  it('answers every request, counts the gap, and writes the held counts once Redis is back', async () => {
    const client = new Sep2663Client(shim.url);
    for (let i = 0; i < 2; i++) expect((await client.request('ping')).status).toBe(200);
    await waitForDashboard(shim.baseUrl, 'traffic?range=1h', (t) => t.requests.total === 2);

    await redis.halt();
    const during = [await client.request('ping'), await client.request('tools/list'), await client.request('ping')];
    for (const reply of during) expect(reply.status).toBe(200);
    // At least one flush fails while Redis is down; the counts wait in memory.
    await pollUntil(() => metric(shim.baseUrl, 'mcp_shim_recording_gaps_total'), (gaps) => gaps >= 1, { timeoutMs: 5_000, intervalMs: 200 });
    expect(await metric(shim.baseUrl, 'mcp_shim_recording_pending_events')).toBe(3);
    const unavailable = await fetch(`${shim.baseUrl}/dashboard/api/traffic?range=1h`);
    expect(unavailable.status).toBe(503);

    await redis.restart();
    const after = await waitForDashboard(shim.baseUrl, 'overview?range=1h', (o) => o.traffic.requests.total === 5, 15_000);
    expect(after.traffic.requests.byWire.sep2663).toBe(5);
    expect(after.latency.byMethod).toEqual(
      expect.arrayContaining([
        { wire: 'sep2663', method: 'ping', calls: 4, errors: 0 },
        { wire: 'sep2663', method: 'tools/list', calls: 1, errors: 0 },
      ]),
    );
    expect(after.recording.gaps).toBeGreaterThanOrEqual(1);
    expect(after.recording.gaps).toBe(await metric(shim.baseUrl, 'mcp_shim_recording_gaps_total'));
    expect(after.recording.dropped).toBe(0);
    expect(await metric(shim.baseUrl, 'mcp_shim_recording_pending_events')).toBe(0);
  }, 40_000);
});
