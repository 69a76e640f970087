import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { dashboardJson, postOn, waitForDashboard } from '../../support/observe.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const GUIDE = 'https://docs.example.com/migrate-to-sep2663';
const CUTOVER = { legacySunset: '2027-06-30', migrationGuideUrl: GUIDE };
const dir = mkdtempSync(join(tmpdir(), 'mts-legacy-switch-'));

const stack = useStack({ stores: ['redis'] });

function configFile(name: string, settings: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(settings));
  return path;
}

/** Waits until the shim's stderr holds `count` matches of `pattern`; returns the stderr. */
function waitForStderr(shim: ShimProcess, pattern: RegExp, count = 1): Promise<string> {
  const global = new RegExp(pattern.source, 'g');
  return pollUntil(async () => shim.stderr(), (text) => (text.match(global)?.length ?? 0) >= count, { timeoutMs: 10_000, intervalMs: 50 });
}

function expectSwitchedOff(reply: { status: number; body: { id?: unknown; error?: { code: number; message: string; data?: unknown } } }, what: string): void {
  expect(reply.status, what).toBe(410);
  expect(reply.body.error?.code, what).toBe(-32013);
  expect(reply.body.error?.message, what).toContain('docs/migration.md');
  expect(reply.body.error?.message, what).toContain(GUIDE);
  expect(reply.body.error?.data, what).toMatchObject({ reason: 'legacy-off', migrationGuide: GUIDE });
}

describe('legacy mode off', () => {
  let off: ShimProcess;
  let session: LegacySession;
  let dialect: LegacySession;
  let legacyTask: string;
  let dialectTask: string;

  beforeAll(async () => {
    // Tasks made on the old wires while they were on; the replica that switched them off shares the Redis.
    const on = stack.shim().url;
    session = await LegacySession.open(on, { clientInfo: { name: 'still-legacy', version: '1.0.0' } });
    legacyTask = (await session.result('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).task.taskId;
    dialect = await LegacySession.open(on, { clientInfo: { name: 'still-dialect', version: '1.0.0' } });
    dialectTask = (await dialect.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } })).taskId;
    off = await stack.startShim({ args: ['--config', configFile('off.json', { ...CUTOVER, legacy: 'off' })] });
  });

  it('answers every old-wire task request with HTTP 410 and -32013 naming the migration guide', async () => {
    for (const [method, params] of [
      ['tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} }],
      ['tasks/get', { taskId: legacyTask }],
      ['tasks/result', { taskId: legacyTask }],
      ['tasks/list', {}],
      ['tasks/cancel', { taskId: legacyTask }],
    ] as const) {
      const reply = await postOn(off.url, session, method, params);
      expectSwitchedOff(reply, method);
      expect(reply.headers.get('sunset'), method).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    }
    for (const [method, params] of [
      ['tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } }],
      ['tasks/status', { taskId: dialectTask }],
      ['tasks/list', {}],
    ] as const) {
      expectSwitchedOff(await postOn(off.url, dialect, method, params), `dialect ${method}`);
    }
  });

  it('leaves non-task traffic of a legacy session alone: initialize, tools/list, plain calls, ping', async () => {
    const fresh = await LegacySession.open(off.url);
    expect((await fresh.result('tools/list')).tools.map((t: { name: string }) => t.name)).toContain('greet');
    expect((await fresh.result('tools/call', { name: 'greet', arguments: { name: 'Off' } })).content[0].text).toContain('Off');
    expect(await fresh.result('ping')).toEqual({});
  });

  it('serves SEP-2663 as usual, and the tasks made on the old wires stay readable there', async () => {
    const client = new Sep2663Client(off.url);
    expect((await client.createTask('failing_job')).resultType).toBe('task');
    expect(await client.waitForStatus(legacyTask, 'completed')).toMatchObject({ taskId: legacyTask, status: 'completed' });
    expect(await client.waitForStatus(dialectTask, 'completed')).toMatchObject({ taskId: dialectTask, status: 'completed' });
  });

  it('shows the mode on the dashboard and counts the refused calls as old-API traffic of their client', async () => {
    const cutover = await dashboardJson(off.baseUrl, 'cutover');
    expect(cutover).toMatchObject({ legacy: 'off', drain: false, legacyHistory: [{ mode: 'off', at: expect.any(String) }] });
    const { clients } = await waitForDashboard(off.baseUrl, 'clients?range=1h', (c) =>
      c.clients.some((row: { name: string; errors: number }) => row.name === 'still-legacy' && row.errors >= 5),
    );
    expect(clients.find((row: { name: string }) => row.name === 'still-legacy').wires).toContain('mcp-2025-11-25');
  });
});

describe('the legacy switch flipped by SIGHUP', () => {
  let shim: ShimProcess;
  let path: string;

  beforeAll(async () => {
    path = configFile('flip.json', { ...CUTOVER, legacy: 'on' });
    shim = await stack.startShim({ args: ['--config', path] });
  });

  it('under traffic: no request dropped, old-wire task requests refused from the flip on, SEP-2663 and non-task traffic unaffected', async () => {
    const session = await LegacySession.open(shim.url, { clientInfo: { name: 'flipped', version: '1.0.0' } });
    const legacyTask = (await session.result('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).task.taskId;
    const client = new Sep2663Client(shim.url);
    const modernTask = (await client.createTask('slow_compute', { seconds: 3 })).taskId;

    // Set once the shim has said it switched: requests sent after it must all be refused.
    const flip: { at?: number } = {};
    const legacyAnswers: Array<{ sentAt: number; status: number; code?: number }> = [];
    const other: Array<{ what: string; ok: boolean; detail: string }> = [];
    const deadline = (): boolean => flip.at !== undefined && Date.now() > flip.at + 1_500;
    const loop = async (fn: () => Promise<void>): Promise<void> => {
      for (let i = 0; i < 2_000 && !deadline(); i++) await fn();
    };
    const traffic = Promise.all([
      loop(async () => {
        const sentAt = Date.now();
        const reply = await postOn(shim.url, session, 'tasks/get', { taskId: legacyTask });
        legacyAnswers.push({ sentAt, status: reply.status, code: reply.body?.error?.code });
      }),
      loop(async () => {
        const reply = await client.getTask(modernTask);
        other.push({ what: 'sep2663 tasks/get', ok: reply.status === 200 && reply.body?.result?.taskId === modernTask, detail: reply.text });
      }),
      loop(async () => {
        const reply = await postOn(shim.url, session, 'tools/call', { name: 'greet', arguments: { name: 'F' } });
        other.push({ what: 'legacy greet', ok: reply.status === 200 && reply.body?.result !== undefined, detail: JSON.stringify(reply.body) });
      }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(path, JSON.stringify({ ...CUTOVER, legacy: 'off' }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /legacy: on → off/);
    flip.at = Date.now();
    await traffic;

    expect(shim.stderr()).toMatch(/SIGHUP: configuration reloaded:\n {2}- legacy: on → off/);
    expect(other.filter((r) => !r.ok)).toEqual([]);
    expect(other.length).toBeGreaterThan(10);
    // Every legacy answer is the task or the documented refusal, and once refused, always refused.
    expect(legacyAnswers.every((a) => (a.status === 200 && a.code === undefined) || (a.status === 410 && a.code === -32013))).toBe(true);
    const firstRefusal = legacyAnswers.findIndex((a) => a.status === 410);
    expect(firstRefusal).toBeGreaterThan(0);
    expect(legacyAnswers.slice(firstRefusal).every((a) => a.status === 410)).toBe(true);
    expect(legacyAnswers.filter((a) => a.sentAt > (flip.at as number)).length).toBeGreaterThan(0);
    expect(legacyAnswers.filter((a) => a.sentAt > (flip.at as number)).every((a) => a.status === 410)).toBe(true);

    // The task made on the legacy wire before the switch is still readable on the SEP-2663 wire.
    expect(await client.waitForStatus(legacyTask, 'completed')).toMatchObject({ taskId: legacyTask });
    const cutover = await dashboardJson(shim.baseUrl, 'cutover');
    expect(cutover.legacy).toBe('off');
    expect(cutover.legacyHistory.map((c: { mode: string }) => c.mode)).toEqual(['on', 'off']);
    const metrics = await (await fetch(`${shim.baseUrl}/metrics`)).text();
    const modes = [...metrics.matchAll(/^mcp_shim_legacy_mode\{mode="(\w+)",replica="[^"]+"\} (\d)$/gm)].map((m) => `${m[1]}=${m[2]}`);
    expect(modes.sort()).toEqual(['drain=0', 'off=1', 'on=0']);
  });

  it('keeps the running configuration when the new file is bad, and says why', async () => {
    const session = await LegacySession.open(shim.url);
    writeFileSync(path, JSON.stringify({ ...CUTOVER, legacy: 'sideways' }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /SIGHUP: reload refused, the running configuration stays: invalid configuration:\n {2}- "legacy" in \S+flip\.json: must be one of on, drain, off/);
    writeFileSync(path, '{"legacy": "on",');
    shim.signal('SIGHUP');
    await waitForStderr(shim, /reload refused/, 2);
    expect(shim.stderr()).toContain(`config file ${path}: not JSON`);
    expectSwitchedOff(await postOn(shim.url, session, 'tasks/list', {}), 'tasks/list after the refused reloads');
    expect((await dashboardJson(shim.baseUrl, 'cutover')).legacy).toBe('off');
  });

  it('switches back on, and names the changed settings that need a restart', async () => {
    const session = await LegacySession.open(shim.url);
    writeFileSync(path, JSON.stringify({ ...CUTOVER, legacy: 'on', maxBodyBytes: 4_096 }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /legacy: off → on/);
    await waitForStderr(shim, /SIGHUP: not reloaded \(restart to apply\): maxBodyBytes/);
    expect((await session.result('tasks/list', {})).tasks).toEqual([]);
    expect((await dashboardJson(shim.baseUrl, 'cutover')).legacyHistory.map((c: { mode: string }) => c.mode)).toEqual(['on', 'off', 'on']);
  });

  it('takes a brownout schedule from the file: a window that covers now refuses the old API at once', async () => {
    const session = await LegacySession.open(shim.url);
    const window = `${new Date(Date.now() - 60_000).toISOString()}/${new Date(Date.now() + 3_600_000).toISOString()}`;
    writeFileSync(path, JSON.stringify({ ...CUTOVER, legacy: 'on', maxBodyBytes: 4_096, legacyBrownouts: [window] }));
    shim.signal('SIGHUP');
    await waitForStderr(shim, /- legacyBrownouts: \[\] → \[/);
    const refused = await postOn(shim.url, session, 'ping');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe(-32011);
    expect((await new Sep2663Client(shim.url).request('ping')).status).toBe(200);
    expect((await dashboardJson(shim.baseUrl, 'cutover')).brownout.active).not.toBeNull();
  });
});

describe('--watch-config', () => {
  it('reloads when the config file changes, without a signal', async () => {
    const path = configFile('watched.json', { legacy: 'on' });
    const shim = await stack.startShim({ args: ['--config', path, '--watch-config'] });
    const session = await LegacySession.open(shim.url);
    expect((await session.result('tasks/list', {})).tasks).toEqual([]);
    writeFileSync(path, JSON.stringify({ legacy: 'drain' }));
    await waitForStderr(shim, new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} changed: configuration reloaded:\\n {2}- legacy: on → drain`));
    const refused = await postOn(shim.url, session, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} });
    expect(refused.body.error.code).toBe(-32010);
    expect((await session.result('tasks/list', {})).tasks).toEqual([]);
  });
});
