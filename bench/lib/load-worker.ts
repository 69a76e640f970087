/**
 * Runs one autocannon load in its own process (so that the load generator does not share an
 * event loop with the bench), and prints the result as one JSON line on stdout.
 */
import autocannon from 'autocannon';
import type { LoadSpec } from './load.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
if (!spec.url.startsWith('http://127.0.0.1:')) throw new Error('loopback only');
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationS,
  method: spec.method ?? 'POST',
  headers: spec.headers,
  body: spec.body,
  ...(spec.rate ? { overallRate: spec.rate } : {}),
  timeout: 10,
});
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    ok: result['2xx'],
  })}\n`,
);
