import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client, type Json } from '../../support/sep2663-client.js';

const stack = useStack();

/** What "quickly" means while Redis is down; the shim's own bound is 1.5 s per store command. */
const FAST_MS = 3_000;
const RETRYABLE = { code: -32603, data: { retryable: true } };

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function readyz(): Promise<number> {
  return (await fetch(`${stack.shim().baseUrl}/readyz`)).status;
}

// Runs in order: the outage test needs the task and session made while Redis was up.
describe('a shim whose Redis is down', () => {
  const sep = (): Sep2663Client => new Sep2663Client(stack.shim().url);
  let taskId: string;
  let legacy: LegacySession;

  it('serves tasks before the outage', async () => {
    taskId = (await sep().createTask('run_ci_pipeline', { branch: 'main' })).taskId as string;
    legacy = await LegacySession.open(stack.shim().url);
    expect((await legacy.result('tasks/get', { taskId })).taskId).toBe(taskId);
  });

  it('answers every request with a retryable -32603 within a bound, says not ready, and serves again once Redis is back', async () => {
    await stack.redis.halt();
    try {
      await pollUntil(readyz, (status) => status === 503, { timeoutMs: 5_000, intervalMs: 100 });

      // A call that ends inside its window needs no store (docs/decisions/0032): it is answered.
      const quick = await timed(() => sep().callTool('slow_compute', { seconds: 0, label: 'without-redis' }));
      expect(quick.value.status).toBe(200);
      expect(quick.value.body.result.content[0].text).toBe('Computed without-redis after 0s');
      expect(quick.ms).toBeLessThan(FAST_MS);

      const call = await timed(() => sep().callTool('run_ci_pipeline', { commit: 'down' }, { capabilities: {} }));
      expect(call.value.status).toBe(200);
      expect(call.value.body.error).toMatchObject(RETRYABLE);
      expect(call.ms).toBeLessThan(FAST_MS);

      const get = await timed(() => sep().getTask(taskId));
      expect(get.value.status).toBe(200);
      expect(get.value.body.error).toMatchObject(RETRYABLE);
      expect(get.ms).toBeLessThan(FAST_MS);

      const legacyGet = await timed(() => legacy.post({ jsonrpc: '2.0', id: 41, method: 'tasks/get', params: { taskId } }));
      expect(legacyGet.value.status).toBe(200);
      expect(legacyGet.value.body).toMatchObject({ id: 41, error: RETRYABLE });
      expect(legacyGet.ms).toBeLessThan(FAST_MS);

      const legacyCall = await timed(() =>
        legacy.post({ jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'run_ci_pipeline', arguments: {}, task: { ttl: 60_000 } } }),
      );
      expect(legacyCall.value.body).toMatchObject({ id: 42, error: RETRYABLE });
      expect(legacyCall.ms).toBeLessThan(FAST_MS);

      const listen = await timed(() => sep().listen({ notifications: { taskIds: [taskId] } }));
      expect(listen.value.status).toBe(200);
      expect(((await listen.value.json()) as Json).error).toMatchObject(RETRYABLE);
      expect(listen.ms).toBeLessThan(FAST_MS);

      const stream = await timed(() => fetch(stack.shim().url, { headers: legacy.headers({ accept: 'text/event-stream' }) }));
      expect(stream.value.status).toBe(503);
      expect(((await stream.value.json()) as Json).error).toMatchObject(RETRYABLE);
      expect(stream.ms).toBeLessThan(FAST_MS);

      expect(await readyz()).toBe(503);
    } finally {
      await stack.redis.restart();
    }

    // No restart of the shim: its connections, subscriber and worker come back on their own.
    await pollUntil(readyz, (status) => status === 200, { timeoutMs: 15_000, intervalMs: 100 });
    const c = sep();
    const created = await pollUntil(
      () => c.callTool('slow_compute', { seconds: 2 }),
      (reply) => reply.body?.result?.resultType === 'task',
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const done = await c.waitForStatus(created.body.result.taskId as string, 'completed', { timeoutMs: 20_000, intervalMs: 200 });
    expect(done.status).toBe('completed');

    const session = await LegacySession.open(stack.shim().url);
    const task = (await session.result('tools/call', { name: 'failing_job', arguments: {}, task: { ttl: 60_000 } })).task as { taskId: string };
    const ended = await pollUntil(
      () => session.result('tasks/get', { taskId: task.taskId }),
      (result) => result.status === 'failed',
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(ended.status).toBe('failed');
    expect(stack.shim().stderr()).not.toMatch(/\n\s+at /);
  });
});
