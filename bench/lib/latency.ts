import { post } from './http.js';
import { median, percentile, round } from './stats.js';

export interface LatencySample {
  p50: number;
  p99: number;
  n: number;
}

/** Closed-loop, one request at a time, timed with hrtime (sub-millisecond), bounded in count and time. */
export async function sequentialLatency(url: string, req: { headers: Record<string, string>; body: string }, n: number, maxMs = 15_000): Promise<LatencySample> {
  const samples: number[] = [];
  const deadline = Date.now() + maxMs;
  for (let i = 0; i < n && Date.now() < deadline; i++) {
    const t0 = process.hrtime.bigint();
    const reply = await post(url, req.headers, req.body);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (reply.status >= 300) throw new Error(`${url} answered ${reply.status}: ${reply.text.slice(0, 200)}`);
    if (i >= 20) samples.push(ms); // the first requests warm the path
  }
  return { p50: round(percentile(samples, 50), 3), p99: round(percentile(samples, 99), 3), n: samples.length };
}

export function medianOf(samples: LatencySample[], key: 'p50' | 'p99'): number {
  return round(median(samples.map((s) => s[key])), 3);
}
