import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, type Json } from '../../support/sep2663-client.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefghij';
const tokensFile = join(mkdtempSync(join(tmpdir(), 'mts-push-answers-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, args: ['--tokens', tokensFile] });

/** A legacy client's answers to pushed input requests go through the same checks as tasks/update. */
describe.concurrent.each(STORES)('answers to pushed input requests (%s store)', (store) => {
  const open = (token = ALICE): Promise<LegacySession> => LegacySession.open(stack.shim(store).url, { token });

  /** A confirm_delete task waiting on its elicitation, and the push id the GET stream carried. */
  async function waitingTask(session: LegacySession, filename: string): Promise<{ taskId: string; pushId: string; snapshot: Json }> {
    const stream = session.openGetStream();
    try {
      const taskId = (await session.result('tools/call', { name: 'confirm_delete', arguments: { filename }, task: {} })).task.taskId as string;
      const push = await stream.next((e) => e.message?.method === 'elicitation/create');
      const snapshot = await pollUntil(() => session.result('tasks/get', { taskId }), (t) => t.status === 'input_required', { timeoutMs: 10_000 });
      return { taskId, pushId: push.message.id as string, snapshot };
    } finally {
      stream.close();
    }
  }

  it('refuses a malformed answer with HTTP 400 and a -32602 naming its key, and the task keeps waiting for it', async () => {
    const session = await open();
    const { taskId, pushId, snapshot } = await waitingTask(session, 'malformed.txt');
    const key = pushId.split(':')[2];
    const refused = await session.answer(pushId, { action: 'maybe', content: { confirm: true } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32602, message: expect.stringContaining(`Invalid answer for input request '${key}'`), data: { key } },
    });
    expect(await session.result('tasks/get', { taskId })).toEqual(snapshot);
    // The key is still outstanding: a well-formed answer settles it.
    expect((await session.answer(pushId, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    const done = await pollUntil(() => session.result('tasks/get', { taskId }), (t) => t.status === 'completed', { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
  });

  it('takes a JSON-RPC error answer with 202 and hands it to the work as that input’s failure', async () => {
    const session = await open();
    const { taskId, pushId } = await waitingTask(session, 'error-answer.txt');
    const taken = await session.post({ jsonrpc: '2.0', id: pushId, error: { code: -32000, message: 'the user closed the dialog' } });
    expect(taken.status).toBe(202);
    const ended = await pollUntil(() => session.result('tasks/get', { taskId }), (t) => t.status !== 'input_required' && t.status !== 'working', { timeoutMs: 10_000 });
    // A well-formed result would have completed it ('Deleted …'): the error reached the work.
    expect(ended.status).toBe('failed');
  });

  it('ignores with 202 an answer to another principal’s task, which keeps waiting', async () => {
    const alice = await open();
    const { taskId, pushId, snapshot } = await waitingTask(alice, 'foreign.txt');
    const bob = await open(BOB);
    const ignored = await bob.answer(pushId, { action: 'accept', content: { confirm: true } });
    expect(ignored.status).toBe(202);
    expect(ignored.body).toBeUndefined();
    expect(await alice.result('tasks/get', { taskId })).toEqual(snapshot);
  });

  it('ignores with 202 an answer to a key the task never asked, which keeps waiting', async () => {
    const session = await open();
    const { taskId, snapshot } = await waitingTask(session, 'unknown-key.txt');
    const ignored = await session.answer(`task:${taskId}:elicit-never-asked`, { action: 'maybe' });
    expect(ignored.status).toBe(202);
    expect(await session.result('tasks/get', { taskId })).toEqual(snapshot);
  });

  it('ignores with 202 any answer, malformed or not, to a task that is already terminal', async () => {
    const session = await open();
    const { taskId, pushId } = await waitingTask(session, 'terminal.txt');
    const cancelled = await session.result('tasks/cancel', { taskId });
    expect(cancelled.status).toBe('cancelled');
    const before = await session.result('tasks/get', { taskId });
    expect((await session.answer(pushId, { action: 'maybe' })).status).toBe(202);
    expect((await session.answer(pushId, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    expect(await session.result('tasks/get', { taskId })).toEqual(before);
  });
});
