import { Pool } from 'undici';
import { buildRequest, type Json } from './sep2663-client.js';

const TERMINAL = ['completed', 'failed', 'cancelled'];

export interface PollersResult {
  /** The terminal task the first client read. */
  last: Json;
  /** tasks/get answers that showed the task still running, over all clients. */
  livePolls: number;
  /** Every statusMessage the clients saw. */
  seen: Set<string>;
}

/**
 * `clients` SEP-2663 clients, each on a keep-alive connection of its own, polling one task's
 * tasks/get every `intervalMs` until it ends. They start spread over one interval, as clients that
 * started at different moments. `token` authenticates them (a shim with bearer tokens).
 */
export async function pollTask(url: string, taskId: string, options: { clients: number; intervalMs: number; token?: string }): Promise<PollersResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.clients, pipelining: 1 });
  const seen = new Set<string>();
  let livePolls = 0;
  const client = async (offset: number): Promise<Json> => {
    await new Promise((resolve) => setTimeout(resolve, offset));
    for (;;) {
      const { headers, body } = buildRequest('tasks/get', { taskId }, { token: options.token });
      const res = await pool.request({ path: target.pathname, method: 'POST', headers, body: JSON.stringify(body) });
      const reply = (await res.body.json()) as Json;
      const task = reply?.result;
      if (res.statusCode !== 200 || !task) throw new Error(`tasks/get: HTTP ${res.statusCode} ${JSON.stringify(reply)}`);
      if (task.statusMessage) seen.add(task.statusMessage);
      if (TERMINAL.includes(task.status)) return task;
      livePolls++;
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  };
  try {
    const answers = await Promise.all(Array.from({ length: options.clients }, (_, i) => client((i * options.intervalMs) / options.clients)));
    return { last: answers[0], livePolls, seen };
  } finally {
    await pool.close();
  }
}
