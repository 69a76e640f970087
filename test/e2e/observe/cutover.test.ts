import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { dashboardJson, postOn, waitForDashboard } from '../../support/observe.js';
import { Sep2663Client } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const GUIDE = 'https://docs.example.com/migrate-to-sep2663';
const DEPRECATION = '2026-01-01T00:00:00Z';
const SUNSET = '2027-06-30';
const HEADERS = {
  SHIM_LEGACY_DEPRECATION: DEPRECATION,
  SHIM_LEGACY_SUNSET: SUNSET,
  SHIM_MIGRATION_GUIDE_URL: GUIDE,
};
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

// Replica A has no controls; the others share its Redis, so sessions and tasks opened on A are theirs too.
const stack = useStack({ stores: ['redis'] });

function expectDeprecationHeaders(headers: Headers, what: string): void {
  expect(headers.get('deprecation'), what).toBe(`@${Date.parse(DEPRECATION) / 1000}`);
  expect(headers.get('sunset'), what).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
  expect(headers.get('link'), what).toBe(`<${GUIDE}>; rel="deprecation"; type="text/html", <${GUIDE}>; rel="sunset"; type="text/html"`);
}

describe('cutover controls on both legacy wires', () => {
  let drained: ShimProcess;
  let brownout: ShimProcess;
  let scheduled: ShimProcess;
  let mcpSession: LegacySession;
  let dialectSession: LegacySession;
  let mcpTask: string;
  let dialectTask: string;
  const now = Date.now();

  beforeAll(async () => {
    [drained, brownout, scheduled] = await Promise.all([
      stack.startShim({ env: { ...HEADERS, SHIM_LEGACY_DRAIN: 'true' } }),
      stack.startShim({
        env: { ...HEADERS, SHIM_LEGACY_BROWNOUTS: `${iso(now - 3_600_000)}/${iso(now + 3_600_000)},${iso(now + 48 * 3_600_000)}/${iso(now + 49 * 3_600_000)}` },
      }),
      stack.startShim({
        env: { SHIM_LEGACY_BROWNOUTS: `${iso(now - 7_200_000)}/${iso(now - 3_600_000)},${iso(now + 3_600_000)}/${iso(now + 7_200_000)}` },
      }),
    ]);
    const plain = stack.shim().url;
    mcpSession = await LegacySession.open(plain, { clientInfo: { name: 'cutover-mcp', version: '1.0.0' } });
    mcpTask = (await mcpSession.result('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).task.taskId;
    dialectSession = await LegacySession.open(plain, { clientInfo: { name: 'cutover-dialect', version: '1.0.0' } });
    dialectTask = (await dialectSession.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } })).taskId;
  });

  describe('Deprecation, Sunset and Link headers', () => {
    it('on every 2025-11-25 response: initialize, task methods, tools/list, passthrough and the GET stream', async () => {
      const session = await LegacySession.open(drained.url);
      const init = await fetch(drained.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'h', version: '1' } } }),
      });
      expectDeprecationHeaders(init.headers, 'initialize');
      for (const [method, params] of [
        ['tasks/get', { taskId: mcpTask }],
        ['tasks/list', {}],
        ['tools/list', {}],
        ['ping', {}],
        ['tools/call', { name: 'greet', arguments: { name: 'H' } }],
      ] as const) {
        const reply = await postOn(drained.url, mcpSession, method, params);
        expect(reply.body?.error, method).toBeUndefined();
        expectDeprecationHeaders(reply.headers, method);
      }
      const stream = session.openGetStream();
      expectDeprecationHeaders((await stream.ready).headers, 'GET stream');
      stream.close();
    });

    it('on every tasks/create-dialect response, refusals included, and never on SEP-2663', async () => {
      for (const [method, params] of [
        ['tasks/status', { taskId: dialectTask }],
        ['tasks/list', {}],
        ['tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } }],
      ] as const) {
        expectDeprecationHeaders((await postOn(drained.url, dialectSession, method, params)).headers, method);
      }
      const modern = await new Sep2663Client(drained.url).request('ping');
      expect(modern.status).toBe(200);
      expect(modern.headers.get('deprecation')).toBeNull();
      expect(modern.headers.get('sunset')).toBeNull();
      expect(modern.headers.get('link')).toBeNull();
    });
  });

  describe('drain mode', () => {
    it('2025-11-25: a task-augmented tools/call is refused; existing tasks and plain calls still work', async () => {
      const refused = await postOn(drained.url, mcpSession, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} });
      expect(refused.status).toBe(200);
      expect(refused.body.error.code).toBe(-32010);
      expect(refused.body.error.message).toMatch(/drain mode/);
      expect(refused.body.error.message).toContain(GUIDE);
      expect(refused.body.error.data).toMatchObject({ reason: 'drain', migrationGuide: GUIDE });
      expect((await postOn(drained.url, mcpSession, 'tasks/get', { taskId: mcpTask })).body.result.taskId).toBe(mcpTask);
      expect((await postOn(drained.url, mcpSession, 'tasks/list', {})).body.result.tasks.map((t: { taskId: string }) => t.taskId)).toContain(mcpTask);
      expect((await postOn(drained.url, mcpSession, 'tools/call', { name: 'greet', arguments: { name: 'D' } })).body.result).toBeTruthy();
    });

    it('tasks/create dialect: tasks/create is refused; tasks/status and tasks/list still read old tasks', async () => {
      const refused = await postOn(drained.url, dialectSession, 'tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
      expect(refused.status).toBe(200);
      expect(refused.body.error.code).toBe(-32010);
      expect(refused.body.error.message).toMatch(/drain mode/);
      expect((await postOn(drained.url, dialectSession, 'tasks/status', { taskId: dialectTask })).body.result.taskId).toBe(dialectTask);
      expect((await postOn(drained.url, dialectSession, 'tasks/list', {})).body.result.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([dialectTask]);
    });

    it('leaves SEP-2663 task creation alone and shows on the dashboard', async () => {
      expect((await new Sep2663Client(drained.url).createTask('slow_compute', { seconds: 2 })).resultType).toBe('task');
      const cutover = await dashboardJson(drained.baseUrl, 'cutover');
      expect(cutover).toMatchObject({
        drain: true,
        migrationGuideUrl: GUIDE,
        deprecation: { at: '2026-01-01T00:00:00.000Z', header: `@${Date.parse(DEPRECATION) / 1000}` },
        sunset: { at: '2027-06-30T00:00:00.000Z', header: 'Wed, 30 Jun 2027 00:00:00 GMT' },
        brownout: { active: null, next: null, windows: [] },
      });
      expect(cutover.headers).toMatchObject({ Deprecation: expect.any(String), Sunset: expect.any(String), Link: expect.any(String) });
    });
  });

  describe('brownout window', () => {
    function expectBrownout(reply: { status: number; headers: Headers; body: { error: { code: number; message: string } } }, what: string): void {
      expect(reply.status, what).toBe(503);
      expect(reply.body.error.code, what).toBe(-32011);
      expect(reply.body.error.message, what).toMatch(/scheduled brownout until/);
      expect(reply.body.error.message, what).toContain(GUIDE);
      expect(Number(reply.headers.get('retry-after')), what).toBeGreaterThan(0);
      expectDeprecationHeaders(reply.headers, what);
    }

    it('2025-11-25: initialize, task methods, plain calls and the GET stream all fail clearly', async () => {
      const init = await fetch(brownout.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'late-client', version: '3.0.0' } } }),
      });
      const body = await init.json();
      expectBrownout({ status: init.status, headers: init.headers, body }, 'initialize');
      expect(body.id).toBe(7);
      for (const [method, params] of [
        ['tasks/get', { taskId: mcpTask }],
        ['tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} }],
        ['tools/call', { name: 'greet', arguments: { name: 'B' } }],
      ] as const) {
        expectBrownout(await postOn(brownout.url, mcpSession, method, params), method);
      }
      const get = await fetch(brownout.url, { headers: mcpSession.headers({ accept: 'text/event-stream' }) });
      expect(get.status).toBe(503);
      expect((await get.json()).error.code).toBe(-32011);
    });

    it('tasks/create dialect: tasks/create and tasks/status fail clearly', async () => {
      expectBrownout(await postOn(brownout.url, dialectSession, 'tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } }), 'tasks/create');
      expectBrownout(await postOn(brownout.url, dialectSession, 'tasks/status', { taskId: dialectTask }), 'tasks/status');
    });

    it('leaves SEP-2663 alone, counts the refused old traffic, and shows the window', async () => {
      expect((await new Sep2663Client(brownout.url).request('ping')).status).toBe(200);
      expect((await new Sep2663Client(brownout.url).createTask('failing_job')).resultType).toBe('task');
      const cutover = await dashboardJson(brownout.baseUrl, 'cutover');
      expect(cutover.brownout.active).toEqual({ start: new Date(now - 3_600_000).toISOString().replace(/\.\d{3}Z$/, '.000Z'), end: new Date(now + 3_600_000).toISOString().replace(/\.\d{3}Z$/, '.000Z') });
      expect(cutover.brownout.next.start).toBe(new Date(iso(now + 48 * 3_600_000)).toISOString());
      // Refused old-API calls are still old-API traffic: they hold the cutover.
      const { clients } = await waitForDashboard(brownout.baseUrl, 'clients?range=1h', (c) =>
        c.clients.some((row: { name: string; errors: number }) => row.name === 'late-client' && row.errors === 1),
      );
      expect(clients.find((row: { name: string }) => row.name === 'late-client')).toMatchObject({ calls: 1, errors: 1, errorRate: 1, wires: ['passthrough'] });
      expect((await dashboardJson(brownout.baseUrl, 'verdict')).state).toBe('blocked');
    });

    it('outside its windows the old API answers as usual', async () => {
      expect((await postOn(scheduled.url, mcpSession, 'tasks/get', { taskId: mcpTask })).body.result.taskId).toBe(mcpTask);
      expect((await postOn(scheduled.url, dialectSession, 'tasks/status', { taskId: dialectTask })).body.result.taskId).toBe(dialectTask);
      const state = await dashboardJson(scheduled.baseUrl, 'cutover');
      expect(state.brownout.active).toBeNull();
      expect(state.brownout.windows.map((w: { state: string }) => w.state)).toEqual(['past', 'scheduled']);
    });
  });
});
