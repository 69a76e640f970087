import { describe, expect, it } from 'vitest';
import type { AggregateStore, FlushBatch } from '../../src/observe/aggregates.js';
import type { RequestEvent } from '../../src/observe/events.js';
import { MemoryAggregateStore } from '../../src/observe/memory-aggregates.js';
import { ShimMetrics } from '../../src/observe/metrics.js';
import { TrafficRecorder } from '../../src/observe/recorder.js';

const event: RequestEvent = { wire: 'sep2663', method: 'ping', principal: 'p', outcome: 'ok', latencyMs: 2, protocolVersion: '2026-07-28' };

/** A memory store that refuses writes while `down` is set, as Redis does while unreachable. */
class FlakyStore extends MemoryAggregateStore {
  down = false;
  writes = 0;
  override async write(batch: FlushBatch): Promise<void> {
    if (this.down) throw new Error('unreachable');
    this.writes++;
    return super.write(batch);
  }
}

function metrics(): ShimMetrics {
  return new ShimMetrics({ replica: 'r1', store: 'embedded', version: '0', queueDepth: async () => 0, pendingEvents: () => 0 });
}

describe('the traffic recorder', () => {
  it('keeps counting while the store refuses flushes, counts each failed flush as a gap, and writes everything once back', async () => {
    const store = new FlakyStore();
    const m = metrics();
    const recorder = new TrafficRecorder({ aggregates: store, metrics: m });
    recorder.record(event);
    await recorder.flush();
    expect(store.writes).toBe(1);

    store.down = true;
    recorder.record(event);
    recorder.record({ ...event, outcome: '-32602' });
    await recorder.flush();
    await recorder.flush();
    expect(recorder.pending).toBe(2);
    expect((await m.render()).body).toMatch(/mcp_shim_recording_gaps_total\{replica="r1"\} 2/);

    store.down = false;
    await recorder.flush();
    expect(recorder.pending).toBe(0);
    expect(await store.readMeta()).toMatchObject({ gaps: 2, dropped: 0 });
    // The test may straddle a minute: read this minute and the one before.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const buckets = await store.readBuckets('m', [minute - 60_000, minute]);
    const count = (name: string) => buckets.reduce((n, b) => n + (b.get(name) ?? 0), 0);
    expect(count('q|sep2663|ping|ok')).toBe(2);
    expect(count('q|sep2663|ping|-32602')).toBe(1);
    await recorder.close();
  });

  it('never throws into a request, even when its own parts fail', () => {
    const broken: AggregateStore = new MemoryAggregateStore();
    const m = metrics();
    m.request = () => {
      throw new Error('boom');
    };
    const logged: string[] = [];
    const recorder = new TrafficRecorder({ aggregates: broken, metrics: m, log: (line) => logged.push(line) });
    expect(() => recorder.record(event)).not.toThrow();
    expect(() => recorder.record(event)).not.toThrow();
    expect(logged).toHaveLength(1);
  });

  it('does not call the time before the store was ever reachable a gap', async () => {
    const store = new FlakyStore();
    store.ready = () => false;
    const m = metrics();
    const recorder = new TrafficRecorder({ aggregates: store, metrics: m });
    recorder.record(event);
    await recorder.flush();
    expect(recorder.pending).toBe(1);
    expect((await m.render()).body).toMatch(/mcp_shim_recording_gaps_total\{replica="r1"\} 0/);
  });

  it('labels requests by wire, method and protocol version in a registry of its own', async () => {
    const a = metrics();
    const b = metrics();
    a.request(event);
    a.request({ ...event, method: 'made/up', protocolVersion: 'x y z' });
    const text = (await a.render()).body;
    expect(text).toContain('mcp_shim_requests_total{wire="sep2663",method="ping",protocol_version="2026-07-28",outcome="ok",replica="r1"} 1');
    expect(text).toContain('mcp_shim_requests_total{wire="sep2663",method="other",protocol_version="unknown",outcome="ok",replica="r1"} 1');
    expect((await b.render()).body).not.toContain('mcp_shim_requests_total{');
  });
});
