import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../../support/round-robin-proxy.js';
import { META, Sep2663Client } from '../../support/sep2663-client.js';
import { dashboardJson, waitForDashboard, writeTokensFile } from '../../support/observe.js';
import type { ShimProcess } from '../../support/shim-process.js';

const TOKENS = { 'token-team-a-0123456789': 'team-a', 'token-team-b-0123456789': 'team-b', 'token-team-c-0123456789': 'team-c' };
const [TOKEN_A, TOKEN_B, TOKEN_C] = Object.keys(TOKENS) as [string, string, string];
/** Long enough that the old clients still hold the cutover whatever the load; a third replica uses a short one. */
const QUIET_MS = 120_000;
const SHORT_QUIET_MS = 4_000;

const stack = useStack({
  stores: ['redis'],
  args: ['--tokens', writeTokensFile(TOKENS)],
  env: { SHIM_CUTOVER_QUIET_PERIOD_MS: String(QUIET_MS), SHIM_REPLICA_ID: 'replica-a' },
});

/**
 * Old and new clients through two replicas behind a round-robin balancer, sharing one Redis: the
 * dashboard's figures are the fleet's, exactly, whichever replica answers them.
 */
describe('the dashboard API over two replicas on one Redis', () => {
  let proxy: RoundRobinProxy;
  let second: ShimProcess;
  let lastOldRequestAt = 0;

  beforeAll(async () => {
    second = await stack.startShim({ env: { SHIM_REPLICA_ID: 'replica-b' } });
    proxy = await startRoundRobinProxy([stack.shim().url, second.url]);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const client = (token: string, name: string, version: string) =>
    new Sep2663Client(proxy.url, { token, meta: { [META.clientInfo]: { name, version } } });

  it('drives mixed traffic: new clients first, then two old ones', async () => {
    // atlas-agent 2.1.0 (team-a), SEP-2663: 5 requests, 1 error, 1 task. Its quick auto call ends
    // inside its window: a request with a plain result, never a task (docs/decisions/0032).
    const atlas = client(TOKEN_A, 'atlas-agent', '2.1.0');
    expect((await atlas.request('ping')).status).toBe(200);
    expect((await atlas.callTool('greet', { name: 'Atlas' })).status).toBe(200);
    expect((await atlas.callTool('slow_compute', { seconds: 0 })).body.result.resultType).toBe('complete');
    const failing = await atlas.createTask('failing_job');
    expect(failing.taskId).toBeTruthy();
    expect((await atlas.getTask('no-such-task')).body.error.code).toBe(-32602);

    // beta-agent 0.3.0 (team-a), SEP-2663 without the tasks extension: 2 requests, 1 error.
    const beta = client(TOKEN_A, 'beta-agent', '0.3.0');
    expect((await beta.callTool('failing_job', {}, { tasks: false })).body.error.code).toBe(-32021);
    expect((await beta.request('ping')).status).toBe(200);

    // legacy-sdk 1.4.0 (team-b), MCP 2025-11-25: initialize + initialized + a plain call (passthrough),
    // a task-augmented call and a failing tasks/get (2025-11-25): 5 requests, 1 error, 1 task.
    const legacy = await LegacySession.open(proxy.url, { token: TOKEN_B, clientInfo: { name: 'legacy-sdk', version: '1.4.0' } });
    expect((await legacy.request('tools/call', { name: 'greet', arguments: { name: 'Old' } })).result).toBeTruthy();
    expect((await legacy.result('tools/call', { name: 'protocol_error_job', arguments: {}, task: {} })).task.taskId).toBeTruthy();
    expect((await legacy.request('tasks/get', { taskId: 'no-such-task' })).error.code).toBe(-32602);

    // cron-bot 0.9.0 (team-c), the tasks/create dialect: initialize + initialized, tasks/create, tasks/status.
    const cron = await LegacySession.open(proxy.url, { token: TOKEN_C, clientInfo: { name: 'cron-bot', version: '0.9.0' } });
    const created = await cron.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect((await cron.result('tasks/status', { taskId: created.taskId })).taskId).toBe(created.taskId);
    lastOldRequestAt = Date.now();
  });

  it('counts every request by wire, exactly, on either replica', async () => {
    const expected = {
      total: 16,
      old: 9,
      new: 7,
      newShare: 7 / 16,
      byWire: { sep2663: 7, 'mcp-2025-11-25': 2, 'tasks-create': 2, passthrough: 5 },
    };
    const traffic = await waitForDashboard(stack.shim().baseUrl, 'traffic?range=1h', (t) => t.requests.total === 16);
    expect(traffic.requests).toEqual(expected);
    expect(traffic.taskCreations).toEqual({
      total: 3,
      old: 2,
      new: 1,
      newShare: 1 / 3,
      byWire: { sep2663: 1, 'mcp-2025-11-25': 1, 'tasks-create': 1, passthrough: 0 },
    });
    // The other replica reads the same fleet figures, and every range holds the same traffic.
    for (const range of ['1h', '24h', '7d', '30d']) {
      const other = await dashboardJson(second.baseUrl, `traffic?range=${range}`);
      expect(other.requests, range).toEqual(expected);
    }
    expect(traffic.series).toHaveLength(60);
    expect(traffic.series.reduce((n: number, p: { requests: Record<string, number> }) => n + Object.values(p.requests).reduce((a, b) => a + b, 0), 0)).toBe(16);
    expect((await dashboardJson(second.baseUrl, 'traffic?range=30d')).series).toHaveLength(120);
  });

  it('fills the client table: name, version, principal, wires, calls, error rate, old-API sightings', async () => {
    const { clients } = await dashboardJson(second.baseUrl, 'clients?range=1h');
    const rows = clients.map((c: Record<string, unknown>) => ({ ...c, wires: [...(c.wires as string[])].sort() }));
    expect(rows.map((c: { name: string }) => c.name)).toEqual(['cron-bot', 'legacy-sdk', 'beta-agent', 'atlas-agent']);
    const byName = Object.fromEntries(rows.map((c: { name: string }) => [c.name, c]));
    expect(byName['cron-bot']).toMatchObject({ version: '0.9.0', principal: 'team-c', wires: ['passthrough', 'tasks-create'], calls: 4, oldCalls: 4, errors: 0, errorRate: 0, firstSeenNew: null, lastSeenNew: null });
    expect(byName['legacy-sdk']).toMatchObject({ version: '1.4.0', principal: 'team-b', wires: ['mcp-2025-11-25', 'passthrough'], calls: 5, oldCalls: 5, errors: 1, errorRate: 0.2, firstSeenNew: null });
    expect(byName['beta-agent']).toMatchObject({ version: '0.3.0', principal: 'team-a', wires: ['sep2663'], calls: 2, oldCalls: 0, errors: 1, errorRate: 0.5, firstSeenOld: null, lastSeenOld: null });
    expect(byName['atlas-agent']).toMatchObject({ version: '2.1.0', principal: 'team-a', wires: ['sep2663'], calls: 5, oldCalls: 0, errors: 1, errorRate: 0.2, firstSeenOld: null, lastSeenOld: null });
    for (const name of ['cron-bot', 'legacy-sdk']) {
      const row = byName[name];
      expect(Date.parse(row.firstSeenOld)).toBeLessThanOrEqual(Date.parse(row.lastSeenOld));
      expect(Date.parse(row.lastSeenOld)).toBeLessThanOrEqual(lastOldRequestAt);
    }
    expect(Date.parse(byName['atlas-agent'].firstSeenNew)).toBeLessThanOrEqual(Date.parse(byName['atlas-agent'].lastSeenNew));
  });

  it('reports task outcomes per wire and per tool once the tasks end', async () => {
    const tasks = await waitForDashboard(
      stack.shim().baseUrl,
      'tasks?range=1h',
      (t) => t.byWire.reduce((n: number, w: { completed: number; failed: number }) => n + w.completed + w.failed, 0) === 3,
      15_000,
    );
    const byWire = Object.fromEntries(tasks.byWire.map((w: { wire: string }) => [w.wire, w]));
    expect(byWire.sep2663).toMatchObject({ created: 1, completed: 1, failed: 0, cancelled: 0, expired: 0 });
    expect(byWire['mcp-2025-11-25']).toMatchObject({ created: 1, completed: 0, failed: 1, cancelled: 0, expired: 0 });
    expect(byWire['tasks-create']).toMatchObject({ created: 1, completed: 1, failed: 0, cancelled: 0, expired: 0 });
    for (const wire of Object.values(byWire) as Array<{ timeToTerminalMs: { p50: number; p95: number } }>) {
      expect(wire.timeToTerminalMs.p50).toBeGreaterThan(0);
      expect(wire.timeToTerminalMs.p95).toBeGreaterThanOrEqual(wire.timeToTerminalMs.p50);
    }
    const byTool = tasks.byTool.map(({ wire, tool, created, completed, failed }: Record<string, unknown>) => ({ wire, tool, created, completed, failed }));
    expect(byTool).toEqual(
      expect.arrayContaining([
        { wire: 'sep2663', tool: 'failing_job', created: 1, completed: 1, failed: 0 },
        { wire: 'mcp-2025-11-25', tool: 'protocol_error_job', created: 1, completed: 0, failed: 1 },
        { wire: 'tasks-create', tool: 'slow_compute', created: 1, completed: 1, failed: 0 },
      ]),
    );
    expect(byTool).toHaveLength(3);
  });

  it('reports latency percentiles and error rates per wire and per tool', async () => {
    const latency = await dashboardJson(stack.shim().baseUrl, 'latency?range=1h');
    const byWire = Object.fromEntries(latency.byWire.map((w: { wire: string }) => [w.wire, w]));
    expect(byWire.sep2663).toMatchObject({ calls: 7, errors: 2 });
    expect(byWire.passthrough).toMatchObject({ calls: 5, errors: 0, errorRate: 0 });
    expect(byWire['mcp-2025-11-25']).toMatchObject({ calls: 2, errors: 1, errorRate: 0.5 });
    expect(byWire['tasks-create']).toMatchObject({ calls: 2, errors: 0 });
    for (const w of latency.byWire) {
      expect(w.p50).toBeGreaterThan(0);
      expect(w.p95).toBeGreaterThanOrEqual(w.p50);
      expect(w.p99).toBeGreaterThanOrEqual(w.p95);
    }
    const tools = latency.byTool.map(({ wire, tool, calls, errors }: Record<string, unknown>) => ({ wire, tool, calls, errors }));
    expect(tools).toEqual(
      expect.arrayContaining([
        { wire: 'sep2663', tool: 'failing_job', calls: 2, errors: 1 },
        { wire: 'sep2663', tool: 'greet', calls: 1, errors: 0 },
        { wire: 'sep2663', tool: 'slow_compute', calls: 1, errors: 0 },
        { wire: 'passthrough', tool: 'greet', calls: 1, errors: 0 },
        { wire: 'mcp-2025-11-25', tool: 'protocol_error_job', calls: 1, errors: 0 },
        { wire: 'tasks-create', tool: 'slow_compute', calls: 1, errors: 0 },
      ]),
    );
    expect(tools).toHaveLength(6);
  });

  it('says who holds the cutover, most recent first, then turns ready after the quiet period', async () => {
    // A replica configured with a short quiet period reads the same fleet data.
    const quick = await stack.startShim({ env: { SHIM_CUTOVER_QUIET_PERIOD_MS: String(SHORT_QUIET_MS), SHIM_REPLICA_ID: 'replica-c' } });
    const blocked = await dashboardJson(second.baseUrl, 'verdict');
    expect(blocked).toMatchObject({ state: 'blocked', ready: false, quietPeriodMs: QUIET_MS });
    expect(blocked.clients.map((c: { name: string; version: string; principal: string }) => [c.name, c.version, c.principal])).toEqual([
      ['cron-bot', '0.9.0', 'team-c'],
      ['legacy-sdk', '1.4.0', 'team-b'],
    ]);
    expect(blocked.lastOldApiAt).toBe(blocked.clients[0].lastSeenOld);
    expect(Date.parse(blocked.readyAt)).toBe(Date.parse(blocked.lastOldApiAt) + QUIET_MS);

    // New-API traffic alone does not hold the cutover.
    await client(TOKEN_A, 'atlas-agent', '2.1.0').request('ping');
    const ready = await waitForDashboard(quick.baseUrl, 'verdict', (v) => v.state === 'ready', SHORT_QUIET_MS + 10_000);
    expect(ready).toMatchObject({ ready: true, clients: [], readyAt: null, quietPeriodMs: SHORT_QUIET_MS, lastOldApiAt: blocked.lastOldApiAt });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(blocked.lastOldApiAt) + SHORT_QUIET_MS);
    // The long quiet period still holds on the other replicas.
    expect((await dashboardJson(stack.shim().baseUrl, 'verdict')).state).toBe('blocked');
    const overview = await waitForDashboard(quick.baseUrl, 'overview?range=1h', (o) => o.traffic.requests.total === 17);
    expect(overview.verdict.state).toBe('ready');
    expect(overview.recording).toMatchObject({ store: 'redis', gaps: 0, dropped: 0 });
  }, SHORT_QUIET_MS + 30_000);

  it('refuses an unknown range', async () => {
    const res = await fetch(`${stack.shim().baseUrl}/dashboard/api/clients?range=2h`);
    expect(res.status).toBe(400);
  });
});
