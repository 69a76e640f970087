/** notifications/tasks fan-out: 1,000 listen streams, delay from completion to delivery. */
import { Agent, request, type ClientRequest } from 'node:http';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { mustResult, sep2663 } from '../lib/mcp.js';
import { sleep } from '../lib/proc.js';
import { percentile, round } from '../lib/stats.js';

const STREAMS = 1_000;
/** Long enough for all streams to be open before the first task ends, so the delay is the fan-out's, not the opening's. */
const TASK_SECONDS = [15, 16, 17];

export async function fanout(ctx: BenchContext): Promise<ScenarioResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const tasks: string[] = [];
  for (const seconds of TASK_SECONDS) {
    const created = await mustResult(ctx.shim.url, sep2663('tools/call', { name: 'slow_compute', arguments: { seconds, label: 'fanout' } }));
    tasks.push(created.taskId as string);
  }
  const createdAt = Date.now();
  const delays: number[] = [];
  let acked = 0;
  let failed = 0;
  let lastAckAt = 0;
  /** Completed notifications that reached a stream acknowledged only after the task had ended (a snapshot, not a fan-out). */
  let late = 0;
  const requests: ClientRequest[] = [];
  const delivered = new Map<string, number>();
  for (let i = 0; i < STREAMS; i++) {
    const { headers, body } = sep2663('subscriptions/listen', { notifications: { taskIds: tasks } });
    const req = request(ctx.shim.url, { method: 'POST', headers, agent }, (res) => {
      if (res.statusCode !== 200) {
        failed++;
        res.resume();
        return;
      }
      let buffer = '';
      let ackedAt = Number.POSITIVE_INFINITY;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = Date.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith('data: ')) continue;
          const msg = JSON.parse(event.slice(6)) as { method?: string; params?: { taskId?: string; status?: string; lastUpdatedAt?: string } };
          if (msg.method === 'notifications/subscriptions/acknowledged') {
            acked++;
            ackedAt = now;
            lastAckAt = Math.max(lastAckAt, now);
          } else if (msg.method === 'notifications/tasks' && msg.params?.status === 'completed') {
            const finishedAt = Date.parse(msg.params.lastUpdatedAt!);
            if (ackedAt > finishedAt) late++;
            else delays.push(now - finishedAt);
            delivered.set(msg.params.taskId!, (delivered.get(msg.params.taskId!) ?? 0) + 1);
          }
        }
      });
      res.on('error', () => {});
    });
    req.on('error', () => void failed++);
    req.end(body);
    requests.push(req);
  }
  const openDeadline = Date.now() + 15_000;
  while (acked + failed < STREAMS && Date.now() < openDeadline) await sleep(50);
  const openMs = Date.now() - createdAt;
  ctx.log(`    ${acked} streams acknowledged (${failed} failed) after ${openMs} ms`);
  const want = STREAMS * TASK_SECONDS.length;
  const deadline = createdAt + (Math.max(...TASK_SECONDS) + 10) * 1_000;
  while (delays.length + late < want && Date.now() < deadline) await sleep(100);
  for (const req of requests) req.destroy();
  agent.destroy();
  const p50 = round(percentile(delays, 50), 1);
  const p99 = round(percentile(delays, 99), 1);
  ctx.log(`    ${delays.length}/${want} deliveries (${late} to streams opened after the task ended): p50 ${p50} ms p99 ${p99} ms max ${Math.max(...delays)} ms`);
  const lateStreams = acked < STREAMS ? `; only ${acked} streams were open` : late > 0 ? `; ${late} went to streams opened after their task ended` : '';
  return {
    name: 'fanout',
    title: `notifications/tasks fan-out (${STREAMS} listen streams × ${TASK_SECONDS.length} tasks)`,
    rows: [
      {
        variant: 'shim (Redis pub/sub)',
        streams: acked,
        'deliveries': `${delays.length}/${want}`,
        'delay p50 ms': p50,
        'delay p99 ms': p99,
        'delay max ms': delays.length ? Math.max(...delays) : Number.NaN,
        'streams open after ms': openMs,
        'last ack after ms': lastAckAt ? lastAckAt - createdAt : Number.NaN,
      },
    ],
    targets: [{ target: 'fan-out p99 < 100 ms (all deliveries arrive)', value: `${p99} ms, ${delays.length}/${want}${lateStreams}`, pass: delays.length === want && p99 < 100 }],
    notes: [
      'Delay = time the bench process read the completed notification − the task’s lastUpdatedAt (set when the runner finished it); same host clock, millisecond resolution. Only streams acknowledged before their task ended count (the tasks run 15–17 s so that all 1,000 are open by then); a completion that reached a stream opened later is its snapshot, not a fan-out, and is reported apart. The 1,000 SSE streams are parsed by the bench process on the same 2 cores.',
    ],
    raw: { delays: { p50, p99, n: delays.length } },
  };
}
