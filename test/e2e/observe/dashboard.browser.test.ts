import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { dashboardJson, waitForDashboard, writeTokensFile } from '../../support/observe.js';
import { META, pollUntil, Sep2663Client } from '../../support/sep2663-client.js';

/** Debian's chromium (installed by .ci/run); never a downloaded browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));
const TIME_ZONE = 'America/New_York';
/** Long, so that the old clients surely hold the cutover in the first views; the last test uses a replica with a short one. */
const QUIET_MS = 120_000;
const SHORT_QUIET_MS = 4_000;

const TOKENS = { 'token-team-a-0123456789': 'team-a', 'token-team-b-0123456789': 'team-b', 'token-team-c-0123456789': 'team-c' };
const [TOKEN_A, TOKEN_B, TOKEN_C] = Object.keys(TOKENS) as [string, string, string];
const hour = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const now = Date.now();

const stack = useStack({
  stores: ['redis'],
  args: ['--tokens', writeTokensFile(TOKENS), '--replica-id', 'dashboard-e2e'],
  env: {
    SHIM_CUTOVER_QUIET_PERIOD_MS: String(QUIET_MS),
    SHIM_LEGACY_DEPRECATION: '2026-01-01',
    SHIM_LEGACY_SUNSET: iso(now + 30 * 24 * hour),
    SHIM_MIGRATION_GUIDE_URL: 'https://docs.example.com/migrate-to-sep2663',
    SHIM_LEGACY_BROWNOUTS: `${iso(now + 7 * 24 * hour)}/${iso(now + 7 * 24 * hour + 2 * hour)}`,
  },
});

/** The formats the page uses for table cells and for full timestamps, in the zone the browser runs in. */
const short = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: TIME_ZONE });
const full = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
  timeZone: TIME_ZONE,
});

async function driveTraffic(url: string): Promise<void> {
  const client = (token: string, name: string, version: string) => new Sep2663Client(url, { token, meta: { [META.clientInfo]: { name, version } } });
  const atlas = client(TOKEN_A, 'atlas-agent', '2.1.0');
  for (let i = 0; i < 6; i++) await atlas.request('ping');
  await atlas.callTool('greet', { name: 'Atlas' });
  const task = await atlas.createTask('failing_job');
  await atlas.createTask('slow_compute', { seconds: 2 });
  await atlas.getTask(task.taskId);
  const beta = client(TOKEN_A, 'beta-agent', '0.3.0');
  await beta.request('tools/list');
  await beta.callTool('failing_job', {}, { tasks: false });
  const legacy = await LegacySession.open(url, { token: TOKEN_B, clientInfo: { name: 'legacy-sdk', version: '1.4.0' } });
  await legacy.result('tools/call', { name: 'protocol_error_job', arguments: {}, task: {} });
  await legacy.request('tools/call', { name: 'greet', arguments: { name: 'Old' } });
  await legacy.request('tasks/list');
  const cron = await LegacySession.open(url, { token: TOKEN_C, clientInfo: { name: 'cron-bot', version: '0.9.0' } });
  const created = await cron.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 1 } });
  await cron.result('tasks/status', { taskId: created.taskId });
}

describe('the dashboard in a browser', () => {
  let context: BrowserContext;
  let profile: string;
  const problems: string[] = [];
  const foreign: string[] = [];
  /** The shims' own origins: the page loads nothing from anywhere else. */
  const origins = new Set<string>();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (see .ci/run)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'mts-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: FLAGS,
      headless: true,
      timezoneId: TIME_ZONE,
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
    });
    origins.add(new URL(stack.shim().baseUrl).origin);
    context.on('page', (page) => watch(page));
    await driveTraffic(stack.shim().url);
    await waitForDashboard(stack.shim().baseUrl, 'overview?range=1h', (o) => o.traffic.requests.total === 21 && o.traffic.taskCreations.total === 4);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  function watch(page: Page): void {
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!origins.has(new URL(request.url()).origin)) foreign.push(request.url());
    });
  }

  async function open(width: number, height: number, baseUrl = stack.shim().baseUrl): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize({ width, height });
    await page.goto(`${baseUrl}/dashboard?range=1h&refresh=1000`);
    await page.waitForSelector('#clients tbody tr[data-client="legacy-sdk"]');
    await page.waitForSelector('#chart-tasks svg[data-total="4"]');
    return page;
  }

  it('shows the driven traffic in the charts and the client table, times in the viewer\'s zone', async () => {
    const page = await open(1280, 900);
    const overview = await dashboardJson(stack.shim().baseUrl, 'overview?range=1h');

    expect(await page.getAttribute('#chart-requests svg', 'data-total')).toBe('21');
    for (const wire of ['sep2663', 'mcp-2025-11-25', 'tasks-create', 'passthrough']) {
      expect(await page.locator(`#chart-requests rect[data-wire="${wire}"]`).count(), wire).toBeGreaterThan(0);
    }
    const sum = async (chart: string, wire: string) =>
      (await page.locator(`#chart-${chart} rect[data-wire="${wire}"]`).evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-value'))))).reduce((a, b) => a + b, 0);
    expect(await sum('requests', 'sep2663')).toBe(overview.traffic.requests.byWire.sep2663);
    expect(await sum('tasks', 'tasks-create')).toBe(1);
    expect(await page.textContent('#kpi-requests')).toBe('21');
    expect(await page.textContent('#kpi-tasks')).toBe('4');

    const names = await page.locator('#clients tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-client')));
    expect(names).toEqual(['cron-bot', 'legacy-sdk', 'beta-agent', 'atlas-agent']);
    const legacy = page.locator('#clients tbody tr[data-client="legacy-sdk"] td');
    const row = overview.clients.find((c: { name: string }) => c.name === 'legacy-sdk');
    expect(await legacy.nth(2).textContent()).toBe('team-b');
    expect(await legacy.nth(4).textContent()).toBe(String(row.calls));
    const lastSeenOld = new Date(row.lastSeenOld);
    expect(await legacy.nth(8).textContent()).toBe(short.format(lastSeenOld));
    const title = await legacy.nth(8).locator('time').getAttribute('title');
    expect(title).toBe(full.format(lastSeenOld));
    expect(title).toMatch(/ (EST|EDT)$/);
    expect(await page.textContent('#recording')).toContain(TIME_ZONE);

    expect(await page.getAttribute('#verdict', 'data-state')).toBe('blocked');
    expect(await page.locator('#verdict-clients li').evaluateAll((items) => items.map((i) => i.getAttribute('data-client')))).toEqual(['cron-bot', 'legacy-sdk']);
    const cutover = await page.textContent('#cutover');
    expect(cutover).toContain('Deprecation: @1767225600');
    expect(cutover).toContain('https://docs.example.com/migrate-to-sep2663');
    expect(cutover).toContain('Next:');
    expect(await page.locator('#tasks-wire tbody tr').count()).toBe(3);
    expect(await page.locator('#latency-wire tbody tr').count()).toBe(4);

    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-1280.png'), fullPage: true });
    await page.close();
  });

  it('works at phone width', async () => {
    const page = await open(390, 844);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.getAttribute('#chart-requests svg', 'data-total')).toBe('21');
    expect(await page.locator('#clients tbody tr[data-client="cron-bot"] td[data-label="Principal"]').textContent()).toBe('team-c');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-390.png'), fullPage: true });
    await page.close();
  });

  it('shows the legacy mode switched off by SIGHUP, on the cutover card and as a mark on the traffic charts, without a reload', async () => {
    const config = join(profile, 'legacy.json');
    writeFileSync(config, JSON.stringify({ legacy: 'on' }));
    const switching = await stack.startShim({ args: ['--config', config] });
    origins.add(new URL(switching.baseUrl).origin);
    const page = await open(1280, 900, switching.baseUrl);
    expect(await page.getAttribute('#legacy-state', 'data-mode')).toBe('on');
    expect(await page.locator('#chart-requests line.mark').count()).toBe(0);

    writeFileSync(config, JSON.stringify({ legacy: 'off' }));
    switching.signal('SIGHUP');
    await pollUntil(async () => switching.stderr(), (text) => text.includes('legacy: on → off'));
    await page.waitForSelector('#legacy-state[data-mode="off"]');
    expect(await page.textContent('#legacy-state')).toBe('Off: old-API task requests refused (HTTP 410)');
    const since = (await dashboardJson(switching.baseUrl, 'cutover')).legacyHistory.at(-1).at;
    expect(await page.textContent('#cutover')).toContain(`since ${full.format(new Date(since))}`);
    await page.waitForSelector('#chart-requests line.mark[data-mode="off"]', { state: 'attached' });
    expect(await page.locator('#chart-tasks line.mark[data-mode="off"]').count()).toBe(1);
    expect(await page.locator('#chart-requests line.mark title').textContent()).toBe(`${full.format(new Date(since))} · legacy API off`);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-legacy-off-1280.png'), fullPage: true });
    await page.close();
  });

  it('turns the verdict to ready once the old clients stop, without a reload', async () => {
    // A replica with a short quiet period, on the same Redis: the same figures, a verdict that can turn.
    const quick = await stack.startShim({ env: { SHIM_CUTOVER_QUIET_PERIOD_MS: String(SHORT_QUIET_MS) } });
    origins.add(new URL(quick.baseUrl).origin);
    const page = await open(1280, 900, quick.baseUrl);
    // An old client is back (it keeps calling until the page, polling without a reload, shows it).
    const old = await LegacySession.open(quick.url, { token: TOKEN_C, clientInfo: { name: 'cron-bot', version: '0.9.0' } });
    for (let shown = false; !shown; ) {
      await old.result('tasks/list');
      shown = await page
        .waitForSelector('#verdict[data-state="blocked"] #verdict-clients li[data-client="cron-bot"]', { timeout: 1_000 })
        .then(() => true, () => false);
    }
    // Only new-API traffic from here on.
    const atlas = new Sep2663Client(quick.url, { token: TOKEN_A, meta: { [META.clientInfo]: { name: 'atlas-agent', version: '2.1.0' } } });
    const deadline = Date.now() + SHORT_QUIET_MS + 15_000;
    let state = 'blocked';
    while (state !== 'ready' && Date.now() < deadline) {
      await atlas.request('ping');
      await page.waitForTimeout(500);
      state = (await page.getAttribute('#verdict', 'data-state')) ?? '';
    }
    expect(state).toBe('ready');
    expect(await page.textContent('#verdict-badge')).toBe('Ready');
    expect(await page.textContent('#verdict-headline')).toBe('The old API can be switched off.');
    expect(await page.locator('#verdict-clients li').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-ready-1280.png'), fullPage: true });
    await page.close();
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  }, SHORT_QUIET_MS + 45_000);
});
