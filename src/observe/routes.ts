import { readFileSync } from 'node:fs';
import express, { type Request, type Response, type Router } from 'express';
import type { PolicyTable } from '../core/policy-table.js';
import { accessGuard } from './access-guard.js';
import type { ShimMetrics } from './metrics.js';
import { isRange } from './ranges.js';
import type { Endpoint, Reports } from './report.js';

const ASSETS = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;
type Asset = keyof typeof ASSETS;

function readAsset(name: Asset): string {
  return readFileSync(new URL(`./dashboard/${name}`, import.meta.url), 'utf8');
}

/** Nothing from anywhere else: the page works offline and cannot be framed. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** How often the background warm-up reads newly closed buckets into the report digests. */
const WARM_EVERY_MS = 60_000;
/** Until a first warm-up pass succeeds (the store's connection is not ready at start-up), it is tried again this soon. */
const WARM_RETRY_MS = 1_000;

export interface ObservabilityRoutesOptions {
  reports: Reports;
  metrics: ShimMetrics;
  /** Bearer token for /dashboard and /metrics; without one only loopback clients get in. */
  token?: string;
  /** Believe `X-Forwarded-Proto` (the dashboard cookie's `Secure`). */
  trustProxy?: boolean;
  /** False on a replica that serves no dashboard (role worker): nothing to keep warm. */
  dashboard?: boolean;
  /** Every upstream tool's effective policy and its source (docs/dashboard.md, "Task policies"). */
  policies?: () => Promise<PolicyTable>;
}

/**
 * `GET /metrics`, `GET /dashboard` (one static page, its script and stylesheet) and the JSON
 * behind it under `/dashboard/api/`. Mounted on the shim's express app; never on the hot path.
 */
export function observabilityRoutes(options: ObservabilityRoutesOptions): Router {
  const router = express.Router();
  const guard = accessGuard({ token: options.token, trustProxy: options.trustProxy });
  const assets = Object.fromEntries((Object.keys(ASSETS) as Asset[]).map((name) => [name, readAsset(name)])) as Record<Asset, string>;

  router.get('/metrics', guard, async (_req, res) => {
    const { contentType, body } = await options.metrics.render();
    res.set('content-type', contentType).set('cache-control', 'no-store').send(body);
  });

  const page = (name: Asset) => (_req: Request, res: Response) => {
    res
      .set('content-type', ASSETS[name])
      .set('cache-control', 'no-cache')
      .set('content-security-policy', CSP)
      .set('x-content-type-options', 'nosniff')
      .set('referrer-policy', 'no-referrer')
      .send(assets[name]);
  };
  // The page's links are relative to `/dashboard` (so that it works under a path prefix too): `/dashboard/` redirects.
  router.get('/dashboard', guard, (req, res) => {
    if (req.path.endsWith('/')) res.redirect(301, '../dashboard');
    else page('index.html')(req, res);
  });
  router.get('/dashboard/app.js', guard, page('app.js'));
  router.get('/dashboard/app.css', guard, page('app.css'));

  const { reports } = options;
  const api = (endpoint: Endpoint) => async (req: Request, res: Response) => {
    const range = req.query.range ?? '24h';
    if (!isRange(range)) {
      res.status(400).json({ error: `range must be one of 1h, 24h, 7d, 30d` });
      return;
    }
    try {
      // What res.json() sends for the object, serialised once per snapshot instead of per request.
      const body = await reports.json(endpoint, range);
      res.set('cache-control', 'no-store').set('content-type', 'application/json').send(body);
    } catch {
      res.status(503).json({ error: 'the traffic aggregates are unreachable; retry shortly' });
    }
  };
  if (options.dashboard !== false) warmInBackground(reports);
  for (const endpoint of ['overview', 'traffic', 'clients', 'tasks', 'latency', 'verdict', 'cutover', 'recording'] as const) {
    router.get(`/dashboard/api/${endpoint}`, guard, api(endpoint));
  }
  const { policies } = options;
  if (policies) {
    router.get('/dashboard/api/policies', guard, async (_req, res) => {
      res.set('cache-control', 'no-store');
      try {
        res.json(await policies());
      } catch (err) {
        // The upstream is down or slow: the page says so and asks again at its next refresh.
        res.status(503).json({ error: `the upstream did not answer tools/list: ${err instanceof Error ? err.message : String(err)}` });
      }
    });
  }
  return router;
}

/**
 * Keeps the closed buckets' digests warm off the request path, so that a dashboard's first request
 * does not read weeks of buckets. Timers never hold the process open; a failed pass (store
 * unreachable) simply waits for the next.
 */
function warmInBackground(reports: Reports): void {
  let warmed = false;
  const first = () => {
    reports.warm().then(
      () => {
        warmed = true;
      },
      () => setTimeout(first, WARM_RETRY_MS).unref(),
    );
  };
  setTimeout(first, 0).unref();
  setInterval(() => {
    if (warmed) reports.warm().catch(() => undefined);
  }, WARM_EVERY_MS).unref();
}
