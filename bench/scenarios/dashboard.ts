/** Dashboard JSON API response time (GET /dashboard/api/*), if the shim serves it. */
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { get } from '../lib/http.js';
import { percentile, round } from '../lib/stats.js';

const ENDPOINTS = ['overview', 'traffic', 'clients', 'tasks', 'latency', 'verdict', 'cutover', 'recording'];
const REQUESTS = 30;

export async function dashboard(ctx: BenchContext): Promise<ScenarioResult> {
  const base = ctx.shim.url.replace(/\/mcp$/, '');
  const probe = await get(`${base}/dashboard/api/overview`);
  if (probe.status === 404) {
    return { name: 'dashboard', title: 'Dashboard JSON API', rows: [], targets: [{ target: 'dashboard API < 50 ms', value: 'not measured: /dashboard/api/* absent', pass: null }], notes: [] };
  }
  const rows: Array<Record<string, string | number>> = [];
  let worst = 0;
  for (const range of ['24h', '7d']) {
    for (const endpoint of ENDPOINTS) {
      const ms: number[] = [];
      let status = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = process.hrtime.bigint();
        const reply = await get(`${base}/dashboard/api/${endpoint}?range=${range}`);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
        status = reply.status;
      }
      const p99 = round(percentile(ms, 99), 2);
      if (status === 200) worst = Math.max(worst, p99);
      rows.push({ variant: `/dashboard/api/${endpoint}?range=${range}`, status, 'p50 ms': round(percentile(ms, 50), 2), 'p99 ms': p99 });
    }
  }
  ctx.log(`    worst p99 ${worst} ms`);
  return {
    name: 'dashboard',
    title: 'Dashboard JSON API response time (traffic recorded by this bench run only)',
    rows,
    targets: [{ target: 'dashboard API < 50 ms (worst endpoint p99)', value: `${worst} ms — with minutes, not 7 days, of traffic`, pass: worst < 50 }],
    notes: [
      `${REQUESTS} sequential GETs per endpoint and range, after the other scenarios recorded their traffic. Not yet measured: 7 days of recorded traffic (no seeding tool for the aggregates exists yet), so this is a lower bound.`,
    ],
  };
}
