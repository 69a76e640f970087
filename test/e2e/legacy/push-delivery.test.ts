import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession, SseStream } from '../../support/legacy-client.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });

function openResultStream(session: LegacySession, taskId: string, id: number): SseStream {
  return new SseStream(
    session.url,
    session.headers(),
    'POST',
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }),
  );
}

describe('where a 2025-11-25 task push goes', () => {
  const open = (): Promise<LegacySession> => LegacySession.open(stack.shim().url);
  const createConfirm = async (session: LegacySession, filename: string): Promise<string> =>
    (await session.result('tools/call', { name: 'confirm_delete', arguments: { filename }, task: {} })).task.taskId;
  const waitInput = (session: LegacySession, taskId: string) =>
    pollUntil(() => session.result('tasks/get', { taskId }), (t) => t.status === 'input_required', { timeoutMs: 10_000 });

  it('sends the elicitation on the GET stream to a client that never calls tasks/result, with status notifications', async () => {
    const session = await open();
    const stream = session.openGetStream();
    const taskId = await createConfirm(session, 'get-only.txt');
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    expect(push.message.id).toBe(`task:${taskId}:${push.message.id.split(':')[2]}`);
    await session.answer(push.message.id, { action: 'accept', content: { confirm: true } });
    const status = await stream.next((e) => e.message?.method === 'notifications/tasks/status' && e.message.params.status === 'completed');
    expect(status.message.params.taskId).toBe(taskId);
    expect(status.message.params).not.toHaveProperty('_meta');
    const done = await pollUntil(() => session.result('tasks/result', { taskId }), () => true, { timeoutMs: 5_000 });
    expect(textOf(done)).toBe('Deleted get-only.txt');
    stream.close();
  });

  it('sends a push already delivered on the open GET stream nowhere else, and tasks/result still answers', async () => {
    const session = await open();
    const get = session.openGetStream();
    const taskId = await createConfirm(session, 'once.txt');
    const push = await get.next((e) => e.message?.method === 'elicitation/create');
    const result = openResultStream(session, taskId, 77);
    await result.next((e) => e.id !== undefined);
    await session.answer(push.message.id, { action: 'decline' });
    const final = await result.next((e) => e.message?.id === 77);
    expect(textOf(final.message.result)).toBe('Kept once.txt');
    expect(final.message.result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    expect(result.events.filter((e) => e.message?.method === 'elicitation/create')).toEqual([]);
    expect(get.events.filter((e) => e.message?.method === 'elicitation/create')).toHaveLength(1);
    get.close();
  });

  it('sends the push on the tasks/result stream when no GET stream is open', async () => {
    const session = await open();
    const taskId = await createConfirm(session, 'result-stream.txt');
    await waitInput(session, taskId);
    const result = openResultStream(session, taskId, 78);
    const push = await result.next((e) => e.message?.method === 'elicitation/create');
    expect(push.message.params._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    await session.answer(push.message.id, { action: 'accept', content: { confirm: true } });
    const final = await result.next((e) => e.message?.id === 78);
    expect(textOf(final.message.result)).toBe('Deleted result-stream.txt');
  });

  it('delivers again on a new stream a push whose stream closed before the answer', async () => {
    const session = await open();
    const first = session.openGetStream();
    const taskId = await createConfirm(session, 'again.txt');
    const push = await first.next((e) => e.message?.method === 'elicitation/create');
    first.close();
    const result = openResultStream(session, taskId, 79);
    const again = await result.next((e) => e.message?.method === 'elicitation/create');
    expect(again.message.id).toBe(push.message.id);
    await session.answer(again.message.id, { action: 'decline' });
    expect(textOf((await result.next((e) => e.message?.id === 79)).message.result)).toBe('Kept again.txt');
  });
});
