import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client, type Reply } from '../../support/sep2663-client.js';

const TTL_MS = 4_000;
const NOT_FOUND = 'Failed to retrieve task: Task not found';
const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES, env: { SHIM_DEFAULT_TTL_MS: String(TTL_MS), SHIM_AUTO_WINDOW_MS: '200' } });

let redis: Redis | undefined;
afterAll(async () => {
  await redis?.quit();
});

async function scanKeys(pattern: string): Promise<string[]> {
  redis ??= new Redis(stack.redis.url);
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

describe.concurrent.each(STORES)('task TTL (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('the handle carries the configured ttlMs', async () => {
    const created = await client().createTask('slow_compute', { seconds: 0.5 });
    expect(created.ttlMs).toBe(TTL_MS);
  });

  it('a completed task stays readable until createdAt + ttlMs, and is -32602 from then on for every method', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 0.5 });
    const deadline = Date.parse(created.createdAt) + created.ttlMs;
    await c.waitForStatus(created.taskId, 'completed');

    // The server decided a read after `sent` and before `answered`.
    let lastRead = 0;
    const gone = await pollUntil(
      async () => {
        const sent = Date.now();
        const reply = await c.getTask(created.taskId);
        if (reply.body.result) lastRead = sent;
        return { answered: Date.now(), reply };
      },
      ({ reply }) => reply.body.error !== undefined,
      { timeoutMs: TTL_MS + 2_000, intervalMs: 20 },
    );
    // No early expiry: it was still read close to the deadline, and it was gone only from it on.
    expect(lastRead).toBeGreaterThan(deadline - 1_500);
    expect(gone.answered).toBeGreaterThanOrEqual(deadline);
    expect(gone.reply.body.error).toEqual({ code: -32602, message: NOT_FOUND });

    const replies: Reply[] = [
      await c.updateTask(created.taskId, {}),
      await c.cancelTask(created.taskId),
    ];
    for (const reply of replies) expect(reply.body.error).toEqual({ code: -32602, message: NOT_FOUND });
    const stream = await c.listen({ notifications: { taskIds: [created.taskId] } });
    try {
      expect((await stream.nextMessage()).params.notifications.taskIds).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('a task still running at its TTL becomes unreadable (-32602) too', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 30 });
    const deadline = Date.parse(created.createdAt) + created.ttlMs;
    const gone = await pollUntil(
      async () => {
        const reply = await c.getTask(created.taskId);
        return { answered: Date.now(), reply };
      },
      ({ reply }) => reply.body.error !== undefined,
      { timeoutMs: TTL_MS + 2_000, intervalMs: 50 },
    );
    expect(gone.answered).toBeGreaterThanOrEqual(deadline);
    expect(gone.reply.body.error.code).toBe(-32602);
  });

  if (store === 'redis') {
    it('leaves no task keys behind in Redis once the tasks expired', async () => {
      const c = client();
      const created = await c.createTask('confirm_delete', { filename: 'ttl.txt' });
      expect(await scanKeys(`*${created.taskId}*`)).not.toEqual([]);
      const task = await c.waitForStatus(created.taskId, 'input_required');
      await c.updateTask(created.taskId, { [Object.keys(task.inputRequests)[0] as string]: { action: 'decline' } });
      // Every task of this file has a TTL of TTL_MS; wait out the last one created.
      await pollUntil(() => scanKeys('mts:task:*'), (keys) => keys.length === 0, { timeoutMs: TTL_MS + 3_000, intervalMs: 100 });
      // Nor any other key about the task, the work queue's job included.
      expect(await scanKeys(`*${created.taskId}*`)).toEqual([]);
    });
  }
});
