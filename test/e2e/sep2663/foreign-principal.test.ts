import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { Sep2663Client, type Json, type Reply } from '../../support/sep2663-client.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefghij';
const tokensFile = join(mkdtempSync(join(tmpdir(), 'mts-tokens-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, args: ['--tokens', tokensFile] });
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** The error without the request id, which differs per request by design. */
function errorOf(reply: Reply): Json {
  expect(reply.body.result).toBeUndefined();
  return { status: reply.status, error: reply.body.error };
}

describe.concurrent.each(STORES)('authentication and foreign tasks (%s store)', (store) => {
  const alice = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: ALICE });
  const bob = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: BOB });

  it('a request without a bearer token is HTTP 401 with WWW-Authenticate: Bearer', async () => {
    const reply = await new Sep2663Client(stack.shim(store).url).request('server/discover');
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(reply.body.jsonrpc).toBe('2.0');
  });

  it('an unknown token is HTTP 401, checked before the body (even malformed JSON)', async () => {
    const reply = await new Sep2663Client(stack.shim(store).url, { token: 'nobody-0123456789abcdef' }).request('server/discover');
    expect(reply.status).toBe(401);
    const res = await fetch(stack.shim(store).url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  });

  it('tasks/get, tasks/update and tasks/cancel on another principal’s task answer exactly as for an unknown id', async () => {
    const created = await alice().createTask('confirm_delete', { filename: 'alice.txt' });
    const task = await alice().waitForStatus(created.taskId, 'input_required');
    const key = Object.keys(task.inputRequests)[0] as string;
    const answer = { [key]: { action: 'accept', content: { confirm: true } } };

    const pairs: Array<[Reply, Reply]> = [
      [await bob().getTask(created.taskId, { id: 1 }), await bob().getTask(UNKNOWN_ID, { id: 1 })],
      [await bob().updateTask(created.taskId, answer, { id: 1 }), await bob().updateTask(UNKNOWN_ID, answer, { id: 1 })],
      [await bob().cancelTask(created.taskId, { id: 1 }), await bob().cancelTask(UNKNOWN_ID, { id: 1 })],
      // A malformed answer to the outstanding key must not reveal that the task exists either.
      [await bob().updateTask(created.taskId, { [key]: { content: {} } }, { id: 1 }), await bob().updateTask(UNKNOWN_ID, { [key]: { content: {} } }, { id: 1 })],
    ];
    for (const [foreign, unknown] of pairs) {
      expect(errorOf(foreign)).toEqual(errorOf(unknown));
      expect(foreign.body.error.code).toBe(-32602);
      expect(foreign.text).toBe(unknown.text);
    }

    // Neither Bob's answer nor his cancel touched Alice's task.
    const after = await alice().result('tasks/get', { taskId: created.taskId });
    expect(after.status).toBe('input_required');
    expect(after.lastUpdatedAt).toBe(task.lastUpdatedAt);
    expect(after.inputRequests).toEqual(task.inputRequests);
    await alice().cancelTask(created.taskId);
  });

  it('a listen leaves another principal’s task out of the ack silently, and never pushes it', async () => {
    const mine = await bob().createTask('slow_compute', { seconds: 30 });
    const theirs = await alice().createTask('failing_job');
    const stream = await bob().listen({ notifications: { taskIds: [theirs.taskId, mine.taskId] } });
    try {
      expect(stream.status).toBe(200);
      const ack = await stream.nextMessage();
      expect(ack.params.notifications.taskIds).toEqual([mine.taskId]);
      await alice().waitForStatus(theirs.taskId, 'completed');
      await bob().cancelTask(mine.taskId);
      const messages: Json[] = [];
      for (;;) {
        const note = await stream.nextMessage();
        messages.push(note);
        if (note.params.taskId === mine.taskId && note.params.status === 'cancelled') break;
      }
      expect(messages.every((m) => m.params.taskId !== theirs.taskId)).toBe(true);
    } finally {
      stream.close();
    }
  });

  it('the owner still reads, answers and listens to its own task', async () => {
    const created = await alice().createTask('failing_job');
    const stream = await alice().listen({ notifications: { taskIds: [created.taskId] } });
    try {
      expect((await stream.nextMessage()).params.notifications.taskIds).toEqual([created.taskId]);
    } finally {
      stream.close();
    }
    const done = await alice().waitForStatus(created.taskId, 'completed');
    expect(done.result.isError).toBe(true);
  });
});
