import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSdkPlainUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { launchChromium, type Chromium } from '../../support/chromium.js';
import { dashboardJson, waitForDashboard } from '../../support/observe.js';
import { Sep2663Client } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

let upstream: DemoUpstreamProcess;
let shim: ShimProcess;
let browser: Chromium;

beforeAll(async () => {
  upstream = await spawnSdkPlainUpstream();
  shim = await startShimProcess({ upstreamUrl: upstream.url, policy: { default: 'auto', tools: { lookup: 'optional', ghost_tool: 'required' } } });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shim?.stop();
  upstream?.killGroup();
  await upstream?.exited;
});

describe('the time to end of a task of known duration on the dashboard', () => {
  it('reads p50 and p95 close to the task\'s real duration', async () => {
    const client = new Sep2663Client(shim.url);
    const created = await client.createTask('build_report', { seconds: 4 });
    await client.waitForStatus(created.taskId, 'completed', { timeoutMs: 15_000 });
    const tasks = await waitForDashboard(shim.baseUrl, 'tasks?range=1h', (t) => t.byWire.some((w: { wire: string; completed: number }) => w.wire === 'sep2663' && w.completed === 1));
    const { p50, p95 } = tasks.byWire.find((w: { wire: string }) => w.wire === 'sep2663').timeToTerminalMs;
    // The call itself takes 4 s; queueing adds a little. Buckets are 10% wide.
    for (const figure of [p50, p95]) {
      expect(figure).toBeGreaterThanOrEqual(3_600);
      expect(figure).toBeLessThanOrEqual(5_000);
    }
    const page = await browser.context.newPage();
    await page.goto(`${shim.baseUrl}/dashboard?range=1h`);
    const cell = page.locator('#tasks-wire tbody tr[data-wire="sep2663"] td[data-label="p50 to end"]');
    await cell.waitFor();
    expect(await cell.textContent()).toBe(`${(p50 / 1000).toFixed(2)} s`);
    await page.close();
  });
});

describe('the task policies on the dashboard', () => {
  it('serves what the upstream speaks and each upstream tool with its effective policy, source and execution mode as JSON', async () => {
    const table = await dashboardJson(shim.baseUrl, 'policies');
    expect(table).toEqual({
      upstream: { protocol: '2025-11-25', pinned: false, tasks: false, sep2663Tasks: false },
      upstreamDeclaresTasks: false,
      default: 'auto',
      tools: [
        { tool: 'build_report', mode: 'auto', source: 'default', syncWindowMs: 1000, upstreamTaskSupport: 'forbidden', execution: 'shim' },
        { tool: 'lookup', mode: 'optional', source: 'policy file', upstreamTaskSupport: 'forbidden', execution: 'shim' },
      ],
      unknownConfigured: ['ghost_tool'],
    });
  });

  it('shows the same table in the page, with the warning about the unknown policy entry', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${shim.baseUrl}/dashboard?range=1h`);
    await page.waitForSelector('#policies tbody tr[data-tool="lookup"]');
    const cells = (tool: string) => page.locator(`#policies tbody tr[data-tool="${tool}"] td`).allTextContents();
    const shimRuns = "shim (a plain call run as the shim's task)";
    expect(await cells('build_report')).toEqual(['build_report', 'auto (1.00 s window)', 'default', 'forbidden', shimRuns]);
    expect(await cells('lookup')).toEqual(['lookup', 'optional', 'policy file', 'forbidden', shimRuns]);
    expect(await page.textContent('#upstream-report')).toBe('Upstream protocol 2025-11-25 (discovered), no capabilities.tasks.');
    expect(await page.textContent('#policies-note')).toBe('The upstream declares no tasks: the policy file, else the default (auto), applies.');
    expect(await page.isVisible('#policies-warning')).toBe(true);
    expect(await page.textContent('#policies-warning')).toBe('The policy file names tools the upstream does not have: ghost_tool');
    expect(errors).toEqual([]);
    await page.close();
  });
});
