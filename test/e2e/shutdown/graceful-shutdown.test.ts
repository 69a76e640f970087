import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession, SseStream } from '../../support/legacy-client.js';
import { META, pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

// No shim of its own: each test starts the replica it stops first, so that its worker is the one
// running the task, and the other replica only afterwards.
const stack = useStack({ stores: [] });

/** Polls the task on `client` until the worker has reported progress: it runs on the only replica. */
async function waitRunning(client: Sep2663Client, taskId: string): Promise<void> {
  await client.waitForTask(taskId, (task) => typeof task.statusMessage === 'string' && task.statusMessage.startsWith('Computing'), {
    timeoutMs: 15_000,
  });
}

async function readyStatus(shim: ShimProcess): Promise<number | 'refused'> {
  try {
    const res = await fetch(`${shim.baseUrl}/readyz`);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'refused';
  }
}

/** A legacy POST of `session` to another replica: sessions live in the shared store. */
async function postVia(url: string, session: LegacySession, message: Record<string, unknown>): Promise<Json> {
  const res = await fetch(url, { method: 'POST', headers: session.headers(), body: JSON.stringify(message) });
  return res.json();
}

describe('graceful shutdown on SIGTERM', () => {
  it('ends listen and GET streams cleanly, answers 503 on /readyz, lets the running task finish and exits 0', async () => {
    const graceMs = 40_000;
    const leaving = await stack.startShim({ env: { SHIM_SHUTDOWN_GRACE_MS: String(graceMs) } });
    const client = new Sep2663Client(leaving.url);
    // Long enough to outlast starting the other replica on a loaded machine, well within the grace.
    const created = await client.createTask('slow_compute', { seconds: 15, label: 'drained' });
    await waitRunning(client, created.taskId);

    const listen = await client.listen({ notifications: { taskIds: [created.taskId] } }, { id: 'L-shutdown' });
    expect((await listen.nextMessage()).method).toBe('notifications/subscriptions/acknowledged');
    const session = await LegacySession.open(leaving.url);
    const get = session.openGetStream();
    const priming = await get.next((e) => e.id !== undefined);
    const staying = await stack.startShim();
    try {
    expect(await readyStatus(leaving)).toBe(200);
    expect((await client.result('tasks/get', { taskId: created.taskId })).status).toBe('working');

    const signalledAt = Date.now();
    leaving.signal('SIGTERM');

    // The listen result is the graceful end (SEP-2663, `subscriptions/listen`), then the stream closes.
    const end = await listen.nextMessage((m) => m.id === 'L-shutdown', 5_000);
    expect(end).toEqual({ jsonrpc: '2.0', id: 'L-shutdown', result: { resultType: 'complete', _meta: { [META.subscriptionId]: 'L-shutdown' } } });
    expect(await listen.next(5_000)).toBeUndefined();
    await expect(get.next(() => false, 5_000)).rejects.toThrow(/stream ended/);
    expect(await pollUntil(() => readyStatus(leaving), (status) => status === 503, { timeoutMs: 5_000 })).toBe(503);

    const exit = await leaving.exited;
    const tookMs = Date.now() - signalledAt;
    expect(exit, leaving.stderr()).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(graceMs);
    expect(leaving.stderr()).toMatch(/SIGTERM: shutting down/);
    expect(leaving.stderr()).toMatch(/stopped/);

    // The task ran to its end on the replica that left, and the other one serves its result.
    const done = await new Sep2663Client(staying.url).waitForStatus(created.taskId, ['completed', 'failed'], { timeoutMs: 5_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Computed drained after 15s');

    // The GET stream resumes on the other replica and still carries the session's pushes.
    const resumed = new SseStream(staying.url, session.headers({ 'last-event-id': priming.id as string, accept: 'text/event-stream' }), 'GET');
    expect((await resumed.ready).status).toBe(200);
    const call = await postVia(staying.url, session, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'confirm_delete', arguments: { filename: 'after-shutdown.txt' }, task: {} },
    });
    const taskId = call.result.task.taskId as string;
    const push = await resumed.next((e) => e.message?.method === 'elicitation/create', 15_000);
    expect(push.message.id).toMatch(new RegExp(`^task:${taskId}:`));
    // Same stream, continued: its event ids carry the stream id of the one that ended.
    expect(push.id?.split('_')[0]).toBe(priming.id?.split('_')[0]);
    resumed.close();
    } finally {
      await Promise.all([leaving.stop(), staying.stop()]);
    }
  }, 120_000);

  it('releases a task still running at the end of the grace period; the other replica ends it as lost', async () => {
    const graceMs = 1_500;
    const lockMs = 2_000;
    const leaving = await stack.startShim({ env: { SHIM_SHUTDOWN_GRACE_MS: String(graceMs), SHIM_JOB_LOCK_MS: String(lockMs) } });
    const client = new Sep2663Client(leaving.url);
    const created = await client.createTask('slow_compute', { seconds: 120, label: 'too-long' });
    await waitRunning(client, created.taskId);
    const staying = await stack.startShim({ env: { SHIM_JOB_LOCK_MS: String(lockMs) } });
    try {
    const signalledAt = Date.now();
    leaving.signal('SIGTERM');
    const exit = await leaving.exited;
    const tookMs = Date.now() - signalledAt;
    expect(exit, leaving.stderr()).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeGreaterThanOrEqual(graceMs);
    expect(tookMs).toBeLessThan(graceMs + 10_000);

    // Not failed by the replica that left: the stall check of the other one hands it on (TaskRunner).
    const ended = await new Sep2663Client(staying.url).waitForStatus(created.taskId, ['completed', 'failed', 'cancelled'], {
      timeoutMs: 4 * lockMs + 10_000,
      intervalMs: 200,
    });
    expect(ended.status).toBe('failed');
    expect(ended.error.message).toMatch(/execution was lost/);
    } finally {
      await Promise.all([leaving.stop(), staying.stop()]);
    }
  }, 90_000);
});
