import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const TOKEN_A = 'token-of-principal-alice-0001';
const TOKEN_B = 'token-of-principal-bob-000002';
const NOT_FOUND = 'Failed to retrieve task: Task not found';

const stack = useStack({ stores: ['redis'] });

describe('one task, every wire', () => {
  let shim: ShimProcess;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mts-tokens-'));
    const file = join(dir, 'tokens.json');
    writeFileSync(file, JSON.stringify({ [TOKEN_A]: 'alice', [TOKEN_B]: 'bob' }));
    shim = await stack.startShim({ args: ['--tokens', file] });
  });
  const modern = (token = TOKEN_A): Sep2663Client => new Sep2663Client(shim.url, { token });
  const legacy = (token = TOKEN_A): Promise<LegacySession> => LegacySession.open(shim.url, { token });

  it('reads a task created on SEP-2663 on both legacy wires, each in its own vocabulary', async () => {
    const created = await modern().createTask('slow_compute', { seconds: 1.2 });
    await modern().waitForStatus(created.taskId, 'completed');
    const session = await legacy();
    const mcp = await session.result('tasks/get', { taskId: created.taskId });
    expect(mcp).toMatchObject({ taskId: created.taskId, status: 'completed', ttl: created.ttlMs, pollInterval: created.pollIntervalMs });
    expect(mcp).not.toHaveProperty('result');
    const dialect = await session.result('tasks/status', { taskId: created.taskId });
    expect(dialect.status).toBe('done');
    expect(textOf(dialect.result)).toBe('Computed result after 1.2s');
  });

  it('reads a task created on the 2025-11-25 wire on SEP-2663 and in the dialect', async () => {
    const session = await legacy();
    const created = (await session.result('tools/call', { name: 'failing_job', arguments: {}, task: { ttl: 90_000 } })).task;
    expect(created.status).toBe('working');
    const done = await modern().waitForStatus(created.taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(done.ttlMs).toBe(90_000);
    expect((await session.result('tasks/get', { taskId: created.taskId })).status).toBe('failed');
    expect((await (await legacy()).result('tasks/status', { taskId: created.taskId })).status).toBe('done');
  });

  it('reads a task created in the dialect on SEP-2663 and on the 2025-11-25 wire', async () => {
    const session = await legacy();
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 30 } });
    const cancelled = await (await legacy()).result('tasks/cancel', { taskId: created.taskId });
    expect(cancelled.status).toBe('error');
    const sep = await modern().result('tasks/get', { taskId: created.taskId });
    expect(sep.status).toBe('cancelled');
    const mcp = await (await legacy()).request('tasks/get', { taskId: created.taskId });
    expect(mcp.result.status).toBe('cancelled');
  });

  it('answers a SEP-2663 task input pushed to the legacy session that reads it', async () => {
    const created = await modern().createTask('confirm_delete', { filename: 'cross.txt' });
    const session = await legacy();
    const stream = session.openGetStream();
    await stream.next((e) => e.id !== undefined);
    await session.result('tasks/get', { taskId: created.taskId });
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    await session.answer(push.message.id, { action: 'accept', content: { confirm: true } });
    const done = await modern().waitForStatus(created.taskId, 'completed');
    expect(textOf(done.result)).toBe('Deleted cross.txt');
    stream.close();
  });

  it('answers -32602 with the not-found message for another principal on every wire', async () => {
    const created = await modern(TOKEN_A).createTask('slow_compute', { seconds: 30 });
    const bob = await legacy(TOKEN_B);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/status']) {
      const answer = await bob.request(method, { taskId: created.taskId });
      expect(answer.error, method).toEqual({ code: -32602, message: NOT_FOUND });
    }
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const reply = await modern(TOKEN_B).request(method, { taskId: created.taskId });
      expect(reply.body.error, method).toEqual({ code: -32602, message: NOT_FOUND });
    }
    const update = await modern(TOKEN_B).updateTask(created.taskId, {});
    expect(update.body.error).toEqual({ code: -32602, message: NOT_FOUND });
    expect((await modern(TOKEN_A).result('tasks/get', { taskId: created.taskId })).status).toBe('working');
    await modern(TOKEN_A).cancelTask(created.taskId);
  });

  it('treats a session of another principal as unknown (404)', async () => {
    const alice = await legacy(TOKEN_A);
    const res = await fetch(shim.url, {
      method: 'POST',
      headers: { ...alice.headers(), authorization: `Bearer ${TOKEN_B}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }),
    });
    expect(res.status).toBe(404);
  });
});
