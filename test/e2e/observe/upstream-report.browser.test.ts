import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnNativeUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { launchChromium, type Chromium } from '../../support/chromium.js';
import { dashboardJson } from '../../support/observe.js';
import { pollUntil } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

const NATIVE = 'native (the upstream runs the task; the shim mirrors it)';

let upstream: DemoUpstreamProcess;
let discovered: ShimProcess;
let pinned: ShimProcess;
let browser: Chromium;

beforeAll(async () => {
  upstream = await spawnNativeUpstream(['--port', '0']);
  // The policy file pins one tool: the table says where each policy came from, next to who runs it.
  const policy = { tools: { native_quick: 'forbidden' } };
  [discovered, pinned] = await Promise.all([
    startShimProcess({ upstreamUrl: upstream.url, policy }),
    startShimProcess({ upstreamUrl: upstream.url, policy, args: ['--upstream-protocol', '2026-07-28'] }),
  ]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([discovered?.stop(), pinned?.stop()]);
  upstream?.killGroup();
  await upstream?.exited;
});

/** The rows of the page's policy table, by tool. */
async function pageTable(baseUrl: string, ready = '#policies tbody tr[data-tool="native_fail"]'): Promise<{ report: string | null; rows: Record<string, string[]>; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${baseUrl}/dashboard?range=1h`);
  await page.waitForSelector(ready);
  const rows: Record<string, string[]> = {};
  for (const tool of ['native_work', 'native_quick', 'native_fail']) rows[tool] = await page.locator(`#policies tbody tr[data-tool="${tool}"] td`).allTextContents();
  const report = await page.textContent('#upstream-report');
  await page.close();
  return { report, rows, errors };
}

describe('the upstream report on the dashboard, next to the task policies', () => {
  it('says the 2025-11-25 upstream runs tool tasks itself, and which tools run natively, in the JSON and the start-up lines alike', async () => {
    const table = await dashboardJson(discovered.baseUrl, 'policies');
    expect(table.upstream).toEqual({ protocol: '2025-11-25', pinned: false, tasks: true, sep2663Tasks: false });
    const row = (tool: string) => table.tools.find((t: { tool: string }) => t.tool === tool);
    expect(row('native_work')).toEqual({ tool: 'native_work', mode: 'required', source: 'upstream', upstreamTaskSupport: 'required', execution: 'native' });
    expect(row('native_quick')).toEqual({ tool: 'native_quick', mode: 'forbidden', source: 'policy file', upstreamTaskSupport: 'optional', execution: 'native' });
    // The start-up lines print the same table.
    const out = await pollUntil(async () => discovered.stdout(), (text) => /^ {4}native_fail /m.test(text), { timeoutMs: 10_000, intervalMs: 50 });
    expect(out).toContain('  protocol: 2025-11-25 (discovered), runs tool tasks itself (capabilities.tasks)\n');
    expect(out).toMatch(/^ {4}native_work +required +native +upstream$/m);
    expect(out).toMatch(/^ {4}native_quick +forbidden +native +policy file \(upstream says optional\)$/m);
  });

  it('shows the protocol line and an execution column in the page', async () => {
    const { report, rows, errors } = await pageTable(discovered.baseUrl);
    expect(report).toBe('Upstream protocol 2025-11-25 (discovered), runs tool tasks itself (capabilities.tasks).');
    expect(rows.native_work).toEqual(['native_work', 'required', 'upstream', 'required', NATIVE]);
    expect(rows.native_quick).toEqual(['native_quick', 'forbidden', 'policy file', 'optional', NATIVE]);
    expect(errors).toEqual([]);
  });

  it('shows a pinned protocol the upstream does not speak as pinned, with the problem, and no tools it could not list', async () => {
    const { report, rows, errors } = await pageTable(pinned.baseUrl, '#upstream-report:not(:empty)');
    expect(report).toBe('Upstream protocol 2026-07-28 (pinned); the upstream did not answer server/discover.');
    expect(rows.native_work).toEqual([]);
    expect(errors).toEqual([]);
    const table = await dashboardJson(pinned.baseUrl, 'policies');
    expect(table.tools).toEqual([]);
  });
});
