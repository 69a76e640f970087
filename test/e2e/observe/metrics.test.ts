import parsePrometheusTextFormat, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const stack = useStack({ stores: ['redis'], args: ['--replica-id', 'replica-m1'] });

async function scrape(baseUrl: string, headers: Record<string, string> = {}): Promise<MetricFamily[]> {
  const res = await fetch(`${baseUrl}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await res.text());
}

/** The exposition text with histogram TYPE lines dropped: each `_bucket`, `_sum`, `_count` series parses as its own labelled family. */
async function scrapeUntyped(baseUrl: string): Promise<MetricFamily[]> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram$/gm, ''));
}

function family(families: MetricFamily[], name: string): MetricFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no ${name} in ${families.map((f) => f.name).join(', ')}`);
  return found;
}

function sample(families: MetricFamily[], name: string, labels: Record<string, string>): Sample | undefined {
  return family(families, name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

/** A non-loopback address of this machine, to reach a shim bound to every interface from "outside". */
describe('GET /metrics in the Prometheus text format', () => {
  beforeAll(async () => {
    const modern = new Sep2663Client(stack.shim().url);
    expect((await modern.request('ping')).status).toBe(200);
    expect((await modern.getTask('no-such-task')).body.error.code).toBe(-32602);
    const legacy = await LegacySession.open(stack.shim().url, { clientInfo: { name: 'metrics-legacy', version: '1.0.0' } });
    const created = await legacy.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    await pollUntil(() => legacy.result('tasks/status', { taskId: created.taskId }), (t) => t.status === 'done');
    await legacy.result('tools/call', { name: 'failing_job', arguments: {}, task: {} });
  });

  it('parses with a real exposition-format parser and labels requests by wire, method, protocol version and replica', async () => {
    const families = await scrape(stack.shim().baseUrl);
    const requests = family(families, 'mcp_shim_requests_total');
    expect(requests.type).toBe('COUNTER');
    for (const m of requests.metrics) expect(Object.keys(m.labels ?? {}).sort()).toEqual(['method', 'outcome', 'protocol_version', 'replica', 'wire']);
    expect(sample(families, 'mcp_shim_requests_total', { wire: 'sep2663', method: 'ping', protocol_version: '2026-07-28', outcome: 'ok', replica: 'replica-m1' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_requests_total', { wire: 'sep2663', method: 'tasks/get', outcome: '-32602' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_requests_total', { wire: 'passthrough', method: 'initialize', protocol_version: '2025-11-25', outcome: 'ok' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_requests_total', { wire: 'tasks-create', method: 'tasks/create', protocol_version: '2025-11-25', outcome: 'ok' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_requests_total', { wire: 'mcp-2025-11-25', method: 'tools/call', protocol_version: '2025-11-25', outcome: 'ok' })?.value).toBe('1');

    expect(family(families, 'mcp_shim_request_duration_seconds').type).toBe('HISTOGRAM');
    // The parser folds a labelled histogram into one unlabelled sample, so its series are read untyped.
    const series = await scrapeUntyped(stack.shim().baseUrl);
    const ping = { wire: 'sep2663', method: 'ping', protocol_version: '2026-07-28', replica: 'replica-m1' };
    expect(sample(series, 'mcp_shim_request_duration_seconds_count', ping)?.value).toBe('1');
    expect(Number(sample(series, 'mcp_shim_request_duration_seconds_sum', ping)?.value)).toBeGreaterThan(0);
    const buckets = family(series, 'mcp_shim_request_duration_seconds_bucket').metrics.filter((m) =>
      Object.entries(ping).every(([k, v]) => m.labels?.[k] === v),
    );
    expect(buckets.map((m) => m.labels?.le)).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf']);
    expect(buckets.at(-1)?.value).toBe('1');
  });

  it('counts tasks by wire and status, and carries queue depth, sessions and process metrics', async () => {
    const families = await pollUntil(
      () => scrape(stack.shim().baseUrl),
      (f) => sample(f, 'mcp_shim_tasks_total', { wire: 'mcp-2025-11-25', status: 'completed' }) !== undefined,
    );
    expect(family(families, 'mcp_shim_tasks_total').type).toBe('COUNTER');
    expect(sample(families, 'mcp_shim_tasks_total', { wire: 'tasks-create', status: 'created', replica: 'replica-m1' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_tasks_total', { wire: 'tasks-create', status: 'completed' })?.value).toBe('1');
    expect(sample(families, 'mcp_shim_tasks_total', { wire: 'mcp-2025-11-25', status: 'created' })?.value).toBe('1');
    expect(family(families, 'mcp_shim_task_time_to_terminal_seconds').type).toBe('HISTOGRAM');
    expect(Number(sample(families, 'mcp_shim_active_sessions', { replica: 'replica-m1' })?.value)).toBe(1);
    expect(sample(families, 'mcp_shim_queue_depth', { replica: 'replica-m1' })?.value).toBeDefined();
    expect(sample(families, 'mcp_shim_recording_gaps_total', {})?.value).toBe('0');
    expect(sample(families, 'mcp_shim_info', { store: 'redis' })?.value).toBe('1');
    expect(family(families, 'process_cpu_user_seconds_total').metrics[0]?.labels?.replica).toBe('replica-m1');
  });

  it('gauges the open legacy GET streams and SEP-2663 listen streams', async () => {
    const streams = (f: MetricFamily[], kind: string) => sample(f, 'mcp_shim_open_streams', { kind })?.value;
    const session = await LegacySession.open(stack.shim().url);
    const get = session.openGetStream();
    await get.next((e) => e.id !== undefined && e.data === '');
    const listen = await new Sep2663Client(stack.shim().url).listen({ notifications: { taskIds: [] } });
    await listen.nextMessage();
    const open = await scrape(stack.shim().baseUrl);
    expect(streams(open, 'legacy-get')).toBe('1');
    expect(streams(open, 'listen')).toBe('1');
    get.close();
    listen.close();
    await pollUntil(() => scrape(stack.shim().baseUrl), (f) => streams(f, 'legacy-get') === '0' && streams(f, 'listen') === '0');
  });
});

describe('access to /metrics and /dashboard', () => {
  const TOKEN = 'dashboard-token-0123456789';
  let guarded: ShimProcess;
  beforeAll(async () => {
    guarded = await stack.startShim({ env: { SHIM_DASHBOARD_TOKEN: TOKEN } });
  });

  it('with a token: bearer for scripts, a cookie set by /dashboard?token= for browsers, 401 otherwise', async () => {
    const base = guarded.baseUrl;
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789ab' } })).status).toBe(401);
    await scrape(base, { authorization: `Bearer ${TOKEN}` });
    const api = await fetch(`${base}/dashboard/api/verdict`);
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(`${base}/dashboard/api/verdict`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${base}/dashboard`)).status).toBe(401);

    const signIn = await fetch(`${base}/dashboard?token=${TOKEN}`, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/dashboard');
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const jar = cookie.split(';')[0] as string;
    const page = await fetch(`${base}/dashboard`, { headers: { cookie: jar } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(`${base}/dashboard/api/overview?range=1h`, { headers: { cookie: jar } })).status).toBe(200);
    // The MCP endpoint is not behind the dashboard token.
    expect((await new Sep2663Client(guarded.url).request('ping')).status).toBe(200);
  });

  it('serves the page, its script and stylesheet with a strict CSP, and sends /dashboard/ to /dashboard', async () => {
    const base = stack.shim().baseUrl;
    const page = await fetch(`${base}/dashboard`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = await page.text();
    expect(html).not.toMatch(/(src|href)="https?:/); // nothing from the network
    expect((await fetch(`${base}/dashboard/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${base}/dashboard/app.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    const slash = await fetch(`${base}/dashboard/`, { redirect: 'manual' });
    expect(slash.status).toBe(301);
    expect(new URL(slash.headers.get('location') as string, `${base}/dashboard/`).pathname).toBe('/dashboard');
  });
});
