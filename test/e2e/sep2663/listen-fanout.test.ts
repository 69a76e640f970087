import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { META, Sep2663Client, type Json, type ListenStream, type SseEvent } from '../../support/sep2663-client.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefghij';
const tokensFile = join(mkdtempSync(join(tmpdir(), 'mts-tokens-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, args: ['--tokens', tokensFile], env: { SHIM_LISTEN_KEEPALIVE_MS: '200' } });
const FANOUT = 200;

const isTaskNote = (taskId: string, status?: string) => (m: Json): boolean =>
  m.method === 'notifications/tasks' && m.params.taskId === taskId && (status === undefined || m.params.status === status);

/** Every event up to and including the next keep-alive comment, which the shim sends only after what it had to say. */
async function untilKeepAlive(stream: ListenStream): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  for (;;) {
    const event = await stream.next(5_000);
    if (event === undefined) throw new Error('the listen stream ended');
    seen.push(event);
    if (event.kind === 'comment') return seen;
  }
}

describe.concurrent.each(STORES)('listen fan-out (%s store)', (store) => {
  const alice = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: ALICE });
  const bob = (): Sep2663Client => new Sep2663Client(stack.shim(store).url, { token: BOB });

  it('two principals listening on the same task id: only the owner is told of it, the other has it left out of the ack', async () => {
    const task = await alice().createTask('slow_compute', { seconds: 30 });
    const own = await alice().listen({ notifications: { taskIds: [task.taskId] } }, { id: 'owner' });
    const foreign = await bob().listen({ notifications: { taskIds: [task.taskId] } }, { id: 'other' });
    try {
      expect((await own.nextMessage()).params.notifications.taskIds).toEqual([task.taskId]);
      const ack = await foreign.nextMessage();
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params.notifications.taskIds).toEqual([]);
      await own.nextMessage(isTaskNote(task.taskId, 'working'));

      await alice().cancelTask(task.taskId);
      const note = await own.nextMessage(isTaskNote(task.taskId, 'cancelled'));
      expect(note.params._meta[META.subscriptionId]).toBe('owner');
      // A change is written to all its watchers at once, so anything meant for the other stream would precede these keep-alives.
      const later = [...(await untilKeepAlive(foreign)), ...(await untilKeepAlive(foreign))];
      expect(later.filter((e) => e.kind === 'message')).toEqual([]);
    } finally {
      own.close();
      foreign.close();
    }
  });

  it(`${FANOUT} streams on one task each get its terminal notification exactly once`, async () => {
    const c = alice();
    const task = await c.createTask('slow_compute', { seconds: 60 });
    const streams = await Promise.all(Array.from({ length: FANOUT }, (_, i) => c.listen({ notifications: { taskIds: [task.taskId] } }, { id: `fan-${i}` })));
    try {
      for (const stream of streams) {
        expect(stream.status).toBe(200);
        await stream.nextMessage(isTaskNote(task.taskId, 'working'));
      }
      await c.cancelTask(task.taskId);
      for (const [i, stream] of streams.entries()) {
        const note = await stream.nextMessage(isTaskNote(task.taskId, 'cancelled'));
        expect(note.params._meta).toEqual({ [META.subscriptionId]: `fan-${i}` });
      }
      for (const stream of streams) {
        const later = [...(await untilKeepAlive(stream)), ...(await untilKeepAlive(stream))];
        expect(later.filter((e) => e.kind === 'message')).toEqual([]);
      }
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
