import type { Registry } from 'prom-client';

/** One label set's figures: a count, a sum and (for the histogram) per-bucket counts. */
export interface Series {
  labels: Record<string, string>;
  count: number;
  sum: number;
  buckets: number[];
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * The per-request series (`mcp_shim_requests_total` and `mcp_shim_request_duration_seconds`),
 * kept as plain numbers: prom-client's `labels().inc()` and `observe()` validate and hash their
 * labels on every call, which the hot path should not pay. The two families are rendered from
 * these numbers when scraped, in the same shapes as prom-client's own Counter and Histogram.
 */
export class RequestSeries {
  private readonly series = new Map<string, Series>();

  constructor(
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric({
      name: 'mcp_shim_requests_total',
      get: () => this.counter(),
    } as never);
    registry.registerMetric({
      name: 'mcp_shim_request_duration_seconds',
      get: () => this.histogram(),
    } as never);
  }

  /** The series of one label set; callers cache it. */
  get(wire: string, method: string, protocolVersion: string, outcome: string): Series {
    const key = `${wire}\u0000${method}\u0000${protocolVersion}\u0000${outcome}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: { wire, method, protocol_version: protocolVersion, outcome },
        count: 0,
        sum: 0,
        buckets: new Array<number>(this.bounds.length).fill(0),
      };
      this.series.set(key, series);
    }
    return series;
  }

  observe(series: Series, seconds: number): void {
    series.count++;
    series.sum += seconds;
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= (this.bounds[i] as number)) {
        series.buckets[i]!++;
        return;
      }
    }
  }

  private counter() {
    return {
      name: 'mcp_shim_requests_total',
      help: 'MCP requests answered by this replica, by wire, method, protocol version and outcome (ok or the JSON-RPC error code)',
      type: 'counter',
      aggregator: 'sum',
      values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })),
    };
  }

  /** The duration histogram has no outcome label: series that differ only by outcome add up. */
  private histogram() {
    const name = 'mcp_shim_request_duration_seconds';
    const merged = new Map<string, { labels: Record<string, string>; count: number; sum: number; buckets: number[] }>();
    for (const s of this.series.values()) {
      const { outcome: _outcome, ...labels } = s.labels;
      const key = `${labels.wire}\u0000${labels.method}\u0000${labels.protocol_version}`;
      let m = merged.get(key);
      if (!m) merged.set(key, (m = { labels, count: 0, sum: 0, buckets: new Array<number>(this.bounds.length).fill(0) }));
      m.count += s.count;
      m.sum += s.sum;
      s.buckets.forEach((n, i) => (m.buckets[i]! += n));
    }
    const values: Sample[] = [];
    for (const m of merged.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += m.buckets[i] as number;
        values.push({ labels: { ...m.labels, le: bound }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { ...m.labels, le: '+Inf' }, value: m.count, metricName: `${name}_bucket` });
      values.push({ labels: m.labels, value: m.sum, metricName: `${name}_sum` });
      values.push({ labels: m.labels, value: m.count, metricName: `${name}_count` });
    }
    return {
      name,
      help: 'Time to the answer (to the first byte for streams), by wire, method and protocol version',
      type: 'histogram',
      aggregator: 'sum',
      values,
    };
  }
}
