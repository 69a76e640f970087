import { afterAll, describe, expect, it } from 'vitest';
import { RedisTaskStore } from '../../../src/store/redis/redis-store.js';
import { META } from '../../../src/wire/sep2663/constants.js';
import { renderDetailedTask } from '../../../src/wire/sep2663/render.js';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES });

const DETAIL_FIELDS = ['result', 'error', 'inputRequests'];

describe.concurrent.each(STORES)('tasks/get (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('a completed task inlines the CallToolResult (with resultType complete) and the answer itself is resultType complete', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 2, label: 'answer' });
    const task = await c.waitForStatus(created.taskId, 'completed');
    expect(task.resultType).toBe('complete');
    expect(task.taskId).toBe(created.taskId);
    expect(task.createdAt).toBe(created.createdAt);
    expect(Date.parse(task.lastUpdatedAt)).toBeGreaterThan(Date.parse(task.createdAt));
    expect(task.ttlMs).toBe(created.ttlMs);
    expect(Number.isInteger(task.pollIntervalMs)).toBe(true);
    expect(task.result.resultType).toBe('complete');
    expect(textOf(task.result)).toBe('Computed answer after 2s');
    expect(task).not.toHaveProperty('error');
    expect(task).not.toHaveProperty('inputRequests');
    expect(task.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
  });

  it('is a pure read: two reads of a terminal task are identical', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 1.5 });
    const first = await c.waitForStatus(created.taskId, 'completed');
    const second = await c.result('tasks/get', { taskId: created.taskId });
    expect(stripMeta(second)).toEqual(stripMeta(first));
  });

  it('a working task carries none of the detailed fields', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 10 });
    const task = await c.result('tasks/get', { taskId: created.taskId });
    expect(task.status).toBe('working');
    for (const field of DETAIL_FIELDS) expect(task).not.toHaveProperty(field);
    await c.cancelTask(created.taskId);
  });

  it('a tool result with isError (failing_job) ends completed, not failed', async () => {
    const c = client();
    const created = await c.createTask('failing_job');
    const task = await c.waitForStatus(created.taskId, ['completed', 'failed']);
    expect(task.status).toBe('completed');
    expect(task.result.isError).toBe(true);
    expect(textOf(task.result)).toBe('Job failed: simulated failure');
    expect(task).not.toHaveProperty('error');
  });

  it('a JSON-RPC error from the upstream (protocol_error_job) ends failed with the error object and a statusMessage', async () => {
    const c = client();
    const created = await c.createTask('protocol_error_job');
    const task = await c.waitForStatus(created.taskId, ['completed', 'failed']);
    expect(task.status).toBe('failed');
    expect(task.resultType).toBe('complete');
    expect(task.error.code).toBe(-32603);
    // The upstream's own message (its SDK prefixes "MCP error -32603: "), carried unchanged.
    expect(task.error.message).toMatch(/Simulated protocol error$/);
    expect(typeof task.statusMessage).toBe('string');
    expect(task.statusMessage.length).toBeGreaterThan(0);
    expect(task).not.toHaveProperty('result');
  });

  it('progress of run_ci_pipeline shows in statusMessage as "Running tests (n/342)", then the task completes', async () => {
    const c = client();
    const created = await c.createTask('run_ci_pipeline', { commit: 'abc123', stepMs: 10 });
    const running = await c.waitForTask(created.taskId, (t) => /^Running tests \(\d+\/342\)$/.test(t.statusMessage ?? ''), { intervalMs: 20 });
    expect(running.status).toBe('working');
    const done = await c.waitForStatus(created.taskId, 'completed', { timeoutMs: 20_000 });
    expect(textOf(done.result)).toBe('Pipeline passed for abc123: 342 tests');
  });
});

describe('tasks/get answers (redis store)', () => {
  let records: RedisTaskStore | undefined;
  afterAll(() => records?.close());

  /** The answer's text, and what the object form of the stored record stringifies to, read around it so that both saw one state. */
  async function answerAndExpected(c: Sep2663Client, taskId: string): Promise<{ text: string; expected: string }> {
    records ??= new RedisTaskStore({ url: stack.redis.url });
    for (;;) {
      const before = await records.load(taskId);
      const reply = await c.request('tasks/get', { taskId }, { id: 'byte-check' });
      const after = await records.load(taskId);
      if (JSON.stringify(before) !== JSON.stringify(after)) continue;
      const serverInfo = (reply.body as Json).result._meta[META.serverInfo];
      const result = { resultType: 'complete', ...renderDetailedTask(after!), _meta: { [META.serverInfo]: serverInfo } };
      return { text: reply.text, expected: JSON.stringify({ jsonrpc: '2.0', id: 'byte-check', result }) };
    }
  }

  it('are byte for byte the stringified object form of the stored task, in every status', async () => {
    const c = new Sep2663Client(stack.shim('redis').url);
    const done = await c.createTask('slow_compute', { seconds: 1.5, label: 'ünïcødé "q" \\ \u2028' });
    const failed = await c.createTask('protocol_error_job');
    const asking = await c.createTask('confirm_delete', { filename: 'ü "x".pdf' });
    const running = await c.createTask('slow_compute', { seconds: 30 });
    const cancelled = await c.createTask('slow_compute', { seconds: 30 });
    await c.cancelTask(cancelled.taskId);
    await c.waitForStatus(done.taskId, 'completed');
    await c.waitForStatus(failed.taskId, 'failed');
    await c.waitForStatus(asking.taskId, 'input_required');
    for (const task of [done, failed, asking, running, cancelled]) {
      const { text, expected } = await answerAndExpected(c, task.taskId);
      expect(text).toBe(expected);
    }
    await c.cancelTask(asking.taskId);
    await c.cancelTask(running.taskId);
  });
});

function stripMeta(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _dropped, ...rest } = result;
  return rest;
}
