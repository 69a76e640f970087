import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis', 'embedded'] });

describe.each(['redis', 'embedded'] as const)('the tasks/create dialect on the %s store', (store) => {
  const open = (): Promise<LegacySession> => LegacySession.open(stack.shim(store).url);
  const statusOf = (session: LegacySession, taskId: string) => session.result('tasks/status', { taskId });
  const until = (session: LegacySession, taskId: string, statuses: string[]) =>
    pollUntil(() => statusOf(session, taskId), (t) => statuses.includes(t.status), { timeoutMs: 15_000 });

  it('creates a task that reads pending or running, then done with the result', async () => {
    const session = await open();
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0.5 }, ttl: 120_000 });
    expect(['pending', 'running']).toContain(created.status);
    expect(created.ttl).toBe(120_000);
    expect(Number.isInteger(created.pollInterval)).toBe(true);
    expect(created).not.toHaveProperty('ttlMs');
    const done = await until(session, created.taskId, ['done', 'error']);
    expect(done.status).toBe('done');
    expect(textOf(done.result)).toBe('Computed result after 0.5s');
  });

  it('pushes the elicitation on the GET stream with the related-task _meta and resumes on the answer', async () => {
    const session = await open();
    const stream = session.openGetStream();
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'x.txt' } });
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    expect(push.id).toBeTruthy();
    expect(push.message.params._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: created.taskId });
    expect((await statusOf(session, created.taskId)).status).toBe('running');
    expect((await session.answer(push.message.id, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    const done = await until(session, created.taskId, ['done', 'error']);
    expect(textOf(done.result)).toBe('Deleted x.txt');
    stream.close();
  });

  it('delivers an elicitation queued while no GET stream was open, after a reconnect with Last-Event-ID', async () => {
    const session = await open();
    const first = session.openGetStream();
    const priming = await first.next((e) => e.id !== undefined && e.data === '');
    first.close();
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'q.txt' } });
    await until(session, created.taskId, ['running']);
    const resumed = session.openGetStream(priming.id);
    const push = await resumed.next((e) => e.message?.method === 'elicitation/create');
    await session.answer(push.message.id, { action: 'decline' });
    expect(textOf((await until(session, created.taskId, ['done'])).result)).toBe('Kept q.txt');
    resumed.close();
  });

  it('replays a push the client missed when it resumes the stream with Last-Event-ID', async () => {
    const session = await open();
    const first = session.openGetStream();
    const priming = await first.next((e) => e.id !== undefined && e.data === '');
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'r.txt' } });
    const pushed = await first.next((e) => e.message?.method === 'elicitation/create');
    first.close();
    const resumed = session.openGetStream(priming.id);
    const replayed = await resumed.next((e) => e.message?.method === 'elicitation/create');
    expect(replayed.id).toBe(pushed.id);
    expect(replayed.message.id).toBe(pushed.message.id);
    await session.answer(replayed.message.id, { action: 'accept', content: { confirm: true } });
    expect(textOf((await until(session, created.taskId, ['done'])).result)).toBe('Deleted r.txt');
    resumed.close();
  });

  it('ignores a duplicate answer and an answer to a push id that was never sent', async () => {
    const session = await open();
    const stream = session.openGetStream();
    const created = await session.result('tasks/create', { name: 'confirm_delete', arguments: { filename: 'd.txt' } });
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    expect((await session.answer(`task:${created.taskId}:never-sent`, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    expect((await session.answer('task:unknown-task:elicit-1', { action: 'accept' })).status).toBe(202);
    expect((await statusOf(session, created.taskId)).status).toBe('running');
    await session.answer(push.message.id, { action: 'decline' });
    expect((await session.answer(push.message.id, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    expect(textOf((await until(session, created.taskId, ['done'])).result)).toBe('Kept d.txt');
    stream.close();
  });

  it('reads a tool error as done with the isError result, and a protocol error as error', async () => {
    const session = await open();
    const failing = await session.result('tasks/create', { name: 'failing_job' });
    const protocol = await session.result('tasks/create', { name: 'protocol_error_job' });
    const toolError = await until(session, failing.taskId, ['done', 'error']);
    expect(toolError.status).toBe('done');
    expect(toolError.result.isError).toBe(true);
    const rpcError = await until(session, protocol.taskId, ['done', 'error']);
    expect(rpcError.status).toBe('error');
    expect(rpcError.error.code).toBe(-32603);
    // The message is the upstream's own, unchanged (the SDK server prefixes it with "MCP error -32603: ").
    expect(rpcError.error.message).toContain('Simulated protocol error');
  });

  it('cancels: the task reads error with data.status cancelled', async () => {
    const session = await open();
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 30 } });
    const answered = await session.result('tasks/cancel', { taskId: created.taskId });
    expect(answered.taskId).toBe(created.taskId);
    const final = await until(session, created.taskId, ['error']);
    expect(final.error).toEqual({ code: -32800, message: 'Task cancelled', data: { status: 'cancelled' } });
    const again = await session.result('tasks/cancel', { taskId: created.taskId });
    expect(again.status).toBe('error');
  });

  it('lists only this session tasks, newest first, in dialect statuses', async () => {
    const session = await open();
    const other = await open();
    const a = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    const b = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    await other.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    await until(session, b.taskId, ['done']);
    const listed = await session.result('tasks/list');
    expect(listed.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([b.taskId, a.taskId]);
    expect(listed.tasks[0].status).toBe('done');
    expect(listed).not.toHaveProperty('nextCursor');
  });

  it('refuses tasks/create for a tool that forbids tasks and for an unknown tool with -32602', async () => {
    const session = await open();
    const forbidden = await session.request('tasks/create', { name: 'greet', arguments: { name: 'x' } });
    expect(forbidden.error.code).toBe(-32602);
    expect(forbidden.error.message).toContain('does not run as a task');
    const unknown = await session.request('tasks/create', { name: 'no_such_tool' });
    expect(unknown.error.code).toBe(-32602);
  });
});
