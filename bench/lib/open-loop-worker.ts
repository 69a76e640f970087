/**
 * The open-loop generator's process (see open-loop.ts); prints its result as one JSON line.
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second that it sends
 * back to back, then idles until the next second, so "half of peak" is bursts at full speed; and
 * it records each latency with `recordValueWithExpectedInterval(latency, ceil(1 / rate))` (1 ms),
 * which adds synthetic samples. Here request i is due at t0 + i / rate; it goes out on an idle
 * keep-alive connection at once, or, when every connection is busy, on the first one to free up,
 * and its latency runs from the time it was due, so that queueing behind a slow answer counts.
 * Due requests are sent whenever the process wakes (an answer arrived, or the 1 ms timer), so the
 * generator's own lateness stays below a millisecond; it is reported as `sendLagP99`. Every
 * latency is kept (no histogram buckets) and the percentiles are exact.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { OpenLoopResult, OpenLoopSpec } from './open-loop.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as OpenLoopSpec;
const target = new URL(spec.url);
if (target.protocol !== 'http:' || target.hostname !== '127.0.0.1') throw new Error('loopback http only');

const TIMEOUT_MS = 10_000;
const warmupMs = (spec.warmupS ?? 1) * 1000;
const windowMs = spec.durationS * 1000;
const intervalMs = 1000 / spec.rate;
const total = Math.ceil(((warmupMs + windowMs) / 1000) * spec.rate);

const body = Buffer.from(spec.body ?? '');
const headerLines = Object.entries({ host: target.host, ...spec.headers, 'content-length': String(body.length) })
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');
const request = Buffer.concat([Buffer.from(`${spec.method ?? 'POST'} ${target.pathname}${target.search} HTTP/1.1\r\n${headerLines}\r\n`), body]);

const latencies = new Float64Array(total);
let answered = 0;
const lags: number[] = [];
const stats = { ok: 0, non2xx: 0, errors: 0, queued: 0 };
let t0 = 0;
let next = 0;
let settled = 0;

/** Due times waiting for a free connection, oldest first. */
const waiting: number[] = [];
let waitingHead = 0;
const idle: Connection[] = [];

/** One keep-alive connection: one request in flight, its answer parsed just enough to know where it ends. */
class Connection {
  private socket!: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  /** Due time of the request in flight, or undefined when idle. */
  private due: number | undefined;

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket = connect(Number(target.port), target.hostname, () => resolve());
      this.socket.setNoDelay(true);
      // A failed connect rejects; a later error is followed by 'close', which counts it.
      this.socket.on('error', reject);
      this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
      this.socket.on('close', () => this.onClose());
    });
  }

  send(due: number): void {
    this.due = due;
    this.socket.write(request);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const answer = parseAnswer(this.buffer);
      if (!answer) return;
      this.buffer = this.buffer.subarray(answer.length);
      const due = this.due;
      this.due = undefined;
      if (due !== undefined) finish(due, answer.status);
      if (answer.close) {
        this.socket.destroy();
        return;
      }
      release(this);
    }
  }

  private onClose(): void {
    if (this.due !== undefined) {
      this.due = undefined;
      stats.errors++;
      settled++;
    }
    this.buffer = Buffer.alloc(0);
    if (settled < total) {
      this.open().then(
        () => release(this),
        () => setTimeout(() => this.onClose(), 100),
      );
    }
  }
}

/** Where an HTTP/1.1 answer at the start of `buffer` ends (content-length or chunked), or undefined while incomplete. */
function parseAnswer(buffer: Buffer): { length: number; status: number; close: boolean } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = buffer.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection:\s*close/i.test(head);
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const end = headEnd + 4 + Number(length[1]);
    return end <= buffer.length ? { length: end, status, close } : undefined;
  }
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) return { length: headEnd + 4, status, close };
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(buffer.toString('latin1', at, lineEnd), 16);
    at = lineEnd + 2 + size + 2;
    if (at > buffer.length) return undefined;
    if (size === 0) return { length: at, status, close };
  }
}

function finish(due: number, status: number): void {
  settled++;
  if (due < t0 + warmupMs) return;
  if (status >= 200 && status < 300) stats.ok++;
  else stats.non2xx++;
  latencies[answered++] = performance.now() - due;
}

function release(connection: Connection): void {
  if (waitingHead < waiting.length) {
    connection.send(waiting[waitingHead++]!);
    return;
  }
  idle.push(connection);
  pump();
}

/** Sends every request that is due by now. */
function pump(): void {
  const now = performance.now();
  while (next < total) {
    const due = t0 + next * intervalMs;
    if (due > now) return;
    next++;
    // Oldest idle first, so that requests rotate over every connection.
    const connection = idle.shift();
    if (connection) {
      if (due >= t0 + warmupMs) lags.push(now - due);
      connection.send(due);
    } else {
      if (due >= t0 + warmupMs) stats.queued++;
      waiting.push(due);
    }
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

const connections = Array.from({ length: spec.connections }, () => new Connection());
await Promise.all(connections.map((c) => c.open()));
idle.push(...connections);
t0 = performance.now();
const timer = setInterval(pump, 1);
pump();
const deadline = t0 + warmupMs + windowMs + TIMEOUT_MS;
await new Promise<void>((resolve) => {
  const check = setInterval(() => {
    if (settled >= total || performance.now() > deadline) {
      clearInterval(check);
      resolve();
    }
  }, 20);
});
clearInterval(timer);

const measured = total - Math.ceil((warmupMs / 1000) * spec.rate);
const sorted = latencies.slice(0, answered).sort();
const sortedLags = Float64Array.from(lags).sort();
const result: OpenLoopResult = {
  offered: measured,
  rps: Math.round(stats.ok / spec.durationS),
  ok: stats.ok,
  non2xx: stats.non2xx,
  errors: stats.errors,
  timeouts: Math.max(0, total - settled),
  p50: round3(percentile(sorted, 50)),
  p90: round3(percentile(sorted, 90)),
  p99: round3(percentile(sorted, 99)),
  p999: round3(percentile(sorted, 99.9)),
  max: round3(sorted.length ? sorted[sorted.length - 1]! : Number.NaN),
  queued: stats.queued,
  sendLagP99: round3(percentile(sortedLags, 99)),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
