/**
 * Work that waits: TASKS `slow_compute` calls of TASK_S seconds each, sent at once to one replica
 * as `npm start` runs it (embedded store, the demo upstream, `slow_compute` auto), by new clients
 * that declared the tasks extension. Each call outlasts its window and becomes a task. Reported:
 * when the tasks ended after their creation (from the records' own timestamps: the moment the
 * call arrived, and its end), and the replica's RSS per running task. The target: the last task
 * done at most 8 s after its creation, so that a replica runs them all at once instead of in
 * turns of its concurrency.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { BenchContext, ScenarioResult } from '../lib/context.js';
import { sep2663 } from '../lib/mcp.js';
import { sleep } from '../lib/proc.js';
import { startShim } from '../lib/servers.js';
import { percentile, round } from '../lib/stats.js';
import { figureTarget } from '../lib/target.js';

const TASKS = 1_000;
const TASK_S = 5;
const DONE_WITHIN_MS = 60_000;

interface Ended {
  createdAt: number;
  endedAt: number;
  status: string;
}

export async function manyTasks(ctx: BenchContext): Promise<ScenarioResult> {
  const policy = join(ctx.workDir, 'many-tasks-policy.json');
  writeFileSync(policy, JSON.stringify({ tools: { slow_compute: 'auto' } }));
  const shim = await startShim({ upstream: ctx.upstream.url, policy });
  const target = new URL(shim.url);
  const pool = new Pool(target.origin, { connections: TASKS + 50 });
  try {
    const post = async (req: { headers: Record<string, string>; body: string }): Promise<Record<string, unknown>> => {
      const res = await pool.request({ path: target.pathname, method: 'POST', headers: req.headers, body: req.body });
      const text = await res.body.text();
      const rpc = JSON.parse(text.startsWith('{') ? text : /data: (.*)/.exec(text)![1]!) as { result?: Record<string, unknown> };
      if (res.statusCode !== 200 || !rpc.result) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
      return rpc.result;
    };
    const rssBefore = rssKiB(shim.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(shim.pid))), 100);
    const sentAt = Date.now();
    const handles = await Promise.all(
      Array.from({ length: TASKS }, (_, i) => post(sep2663('tools/call', { name: 'slow_compute', arguments: { seconds: TASK_S, label: `many-${i}` } }))),
    );
    const answeredMs = Date.now() - sentAt;
    const taskIds = handles.map((handle) => {
      if (handle.resultType !== 'task') throw new Error(`a ${TASK_S} s call did not become a task: ${JSON.stringify(handle)}`);
      return handle.taskId as string;
    });
    const ended = new Map<string, Ended>();
    const deadline = Date.now() + DONE_WITHIN_MS;
    while (ended.size < TASKS && Date.now() < deadline) {
      await sleep(500);
      const open = taskIds.filter((taskId) => !ended.has(taskId));
      for (let i = 0; i < open.length; i += 100) {
        await Promise.all(
          open.slice(i, i + 100).map(async (taskId) => {
            const task = await post(sep2663('tasks/get', { taskId }));
            if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') {
              ended.set(taskId, { createdAt: Date.parse(task.createdAt as string), endedAt: Date.parse(task.lastUpdatedAt as string), status: task.status as string });
            }
          }),
        );
      }
    }
    clearInterval(sampler);
    if (ended.size < TASKS) throw new Error(`${TASKS - ended.size} of ${TASKS} tasks still open after ${DONE_WITHIN_MS / 1000} s`);
    const tasks = [...ended.values()];
    const failed = tasks.filter((t) => t.status !== 'completed').length;
    const after = tasks.map((t) => t.endedAt - t.createdAt);
    const medianS = round(percentile(after, 50) / 1000, 2);
    const lastS = round(Math.max(...after) / 1000, 2);
    const perTaskKiB = round((rssPeak - rssBefore) / TASKS, 1);
    ctx.log(`  ${TASKS} tasks answered in ${answeredMs} ms; ended after creation: median ${medianS} s, last ${lastS} s; ${failed} not completed; RSS +${perTaskKiB} KiB per running task`);
    return {
      name: 'many-tasks',
      title: `Work that waits: ${TASKS} calls of ${TASK_S} s at once on one replica (npm start)`,
      rows: [
        {
          variant: `${TASKS} × slow_compute ${TASK_S} s, embedded store`,
          'all answered (ms)': answeredMs,
          'median end after creation (s)': medianS,
          'p99 end after creation (s)': round(percentile(after, 99) / 1000, 2),
          'last end after creation (s)': lastS,
          'not completed': failed,
          'RSS before (MiB)': round(rssBefore / 1024, 1),
          'RSS peak (MiB)': round(rssPeak / 1024, 1),
          'RSS per running task (KiB)': perTaskKiB,
        },
      ],
      targets: [
        figureTarget(`${TASKS} tasks of ${TASK_S} s at once: the last ends ≤ 8 s after its creation`, `${lastS} s (median ${medianS} s, ${failed} not completed)`, { value: failed > 0 ? 999 : lastS, atMost: 8 }),
        { target: '(info) replica RSS per running task', value: `${perTaskKiB} KiB`, pass: null },
      ],
      notes: [
        `One replica started as \`npm start\` runs it (embedded store, \`slow_compute\` auto with the 1 s window, default SHIM_WORKER_CONCURRENCY), in front of the demo upstream. ${TASKS} new clients (2026-07-28, tasks extension, no input capability) call at once over their own connections; every call outlasts its window and is answered with its task. A task's times are its record's: createdAt (the call's arrival) and lastUpdatedAt once terminal. RSS from /proc, sampled every 100 ms.`,
      ],
      raw: { after, rssBefore, rssPeak, answeredMs },
    };
  } finally {
    await pool.close();
    await shim.stop();
  }
}

/** The resident set of a process, in KiB (Linux). */
function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}
