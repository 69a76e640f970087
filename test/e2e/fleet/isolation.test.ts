import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '../../../src/core/ids.js';
import { RedisTaskStore } from '../../../src/store/redis/redis-store.js';
import { taskKey } from '../../../src/store/redis/keys.js';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { buildRequest, Sep2663Client, type Json } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { forEachParallel, KeepAlivePoster, type RawAnswer } from './keepalive-post.js';

const ALICE = 'alice-token-isolation-0123456789';
const BOB = 'bob-token-isolation-0123456789ab';
const tokensFile = join(mkdtempSync(join(tmpdir(), 'mts-isolation-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));

const FOREIGN_COUNT = 10_000;
const RANDOM_COUNT = 10_000;
const PARALLEL = 32;
const SEED_KEY = 'elicit-seeded';
const ANSWER = { [SEED_KEY]: { action: 'accept', content: { confirm: true } } };
/** Requests use one JSON-RPC id, so that every answer can be compared byte for byte. */
const RPC_ID = 7;

const stack = useStack({ args: ['--tokens', tokensFile] });

let second: ShimProcess;
let redis: Redis;
let poster: KeepAlivePoster;
/** Alice's tasks: three made through the wire (one running on a worker), the rest seeded. */
let foreign: string[];
let random: string[];
let before: Map<string, Json>;

/** Every field of each task hash and its expiry time, read straight from Redis. */
async function snapshot(ids: string[]): Promise<Map<string, Json>> {
  const out = new Map<string, Json>();
  for (let i = 0; i < ids.length; i += 1_000) {
    const chunk = ids.slice(i, i + 1_000);
    const pipeline = redis.pipeline();
    for (const id of chunk) pipeline.hgetall(taskKey('mts', id)).call('PEXPIRETIME', taskKey('mts', id));
    const replies = (await pipeline.exec()) ?? [];
    chunk.forEach((id, n) => out.set(id, { hash: replies[2 * n]?.[1], expiresAt: replies[2 * n + 1]?.[1] }));
  }
  return out;
}

beforeAll(async () => {
  second = await stack.startShim({ args: ['--tokens', tokensFile] });
  redis = new Redis(stack.redis.url);
  poster = new KeepAlivePoster(PARALLEL);
  const alice = new Sep2663Client(stack.shim().url, { token: ALICE });
  const asking = await alice.createTask('confirm_delete', { filename: 'alice.txt' });
  const running = await alice.createTask('slow_compute', { seconds: 600, label: 'alice' });
  const done = await alice.createTask('failing_job');
  await alice.waitForStatus(asking.taskId, 'input_required');
  await alice.waitForTask(running.taskId, (t) => /^Computing alice/.test(t.statusMessage ?? ''));
  await alice.waitForStatus(done.taskId, 'completed');
  const principal = await redis.hget(taskKey('mts', asking.taskId), 'principal');
  if (!principal) throw new Error('the wire-made task has no principal in Redis');

  // Seeded through the store API: real records in the real Redis the shims read, written the
  // way TaskService writes them, about a hundred times faster than 10,000 tools/calls. A third
  // wait for input under SEED_KEY (the key Bob answers), a third completed, a third working.
  const store = new RedisTaskStore({ url: stack.redis.url, prefix: 'mts' });
  const seeded = Array.from({ length: FOREIGN_COUNT - 3 }, () => newTaskId());
  await forEachParallel(seeded, 64, async (taskId, i) => {
    const now = Date.now();
    await store.create({
      taskId,
      principal,
      origin: 'sep2663',
      tool: 'confirm_delete',
      arguments: { filename: `seed-${i}.txt` },
      createdAt: now,
      ttlMs: 60 * 60 * 1000,
      pollIntervalMs: 2_000,
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: 'seed', version: '1.0.0' },
    });
    if (i % 3 === 1) {
      await store.requestInput(taskId, SEED_KEY, { method: 'elicitation/create', params: { message: 'Delete?', requestedSchema: { type: 'object', properties: {} } } }, now);
    } else if (i % 3 === 2) {
      await store.finish(taskId, { status: 'completed', result: { content: [{ type: 'text', text: 'seeded' }] } }, now);
    }
  });
  await store.close();
  foreign = [asking.taskId, running.taskId, done.taskId, ...seeded];
  random = Array.from({ length: RANDOM_COUNT }, () => newTaskId());
  // The running task changes on its own (progress): it is compared apart, on what Bob could change.
  before = await snapshot(foreign);
}, 180_000);

afterAll(async () => {
  poster?.close();
  await redis?.quit();
});

/** Alternates the two replicas, so that both answer for every method. */
const replica = (n: number): string => (n % 2 === 0 ? stack.shim().url : second.url);

/**
 * Sends `build(id)` for every foreign and random id, and checks that each answer is exactly
 * the answer for an id that never existed.
 */
async function expectAllLikeUnknown(label: string, build: (taskId: string) => { headers: Record<string, string>; body: string }): Promise<void> {
  const reference = newTaskId();
  const expected = await send(0, build(reference));
  expect(expected.status, label).toBe(200);
  expect(JSON.parse(expected.text).error.code, `${label}: ${expected.text}`).toBe(-32602);
  const mismatches: string[] = [];
  const ids = [...foreign, ...random];
  await forEachParallel(ids, PARALLEL, async (taskId, n) => {
    const answer = await send(n, build(taskId));
    const normalised = answer.text.split(taskId).join(reference);
    if (answer.status !== expected.status || normalised !== expected.text || answer.contentType !== expected.contentType) {
      mismatches.push(`${taskId}: HTTP ${answer.status} ${answer.text}`);
    }
  });
  expect(mismatches.slice(0, 5), `${label}: ${mismatches.length} of ${ids.length} answers differ from the unknown id's`).toEqual([]);
}

function send(n: number, request: { headers: Record<string, string>; body: string }): Promise<RawAnswer> {
  return poster.post(replica(n), request.headers, request.body);
}

function sep2663(method: string, params: (taskId: string) => Record<string, unknown>) {
  return (taskId: string): { headers: Record<string, string>; body: string } => {
    const { headers, body } = buildRequest(method, params(taskId), { id: RPC_ID, token: BOB });
    return { headers, body: JSON.stringify(body) };
  };
}

describe(`another principal's ${FOREIGN_COUNT} task ids and ${RANDOM_COUNT} random ids`, () => {
  it('answer SEP-2663 tasks/get exactly as an unknown id does (-32602)', { timeout: 120_000 }, async () => {
    await expectAllLikeUnknown('tasks/get', sep2663('tasks/get', (taskId) => ({ taskId })));
  });

  it('answer SEP-2663 tasks/update, with an answer for the outstanding key, exactly as an unknown id does', { timeout: 120_000 }, async () => {
    await expectAllLikeUnknown('tasks/update', sep2663('tasks/update', (taskId) => ({ taskId, inputResponses: ANSWER })));
  });

  it('answer SEP-2663 tasks/cancel exactly as an unknown id does', { timeout: 120_000 }, async () => {
    await expectAllLikeUnknown('tasks/cancel', sep2663('tasks/cancel', (taskId) => ({ taskId })));
  });

  it('are left out of every subscriptions/listen ack silently, like unknown ids', { timeout: 120_000 }, async () => {
    const bob = new Sep2663Client(stack.shim().url, { token: BOB });
    const own = await bob.createTask('slow_compute', { seconds: 600, label: 'bob' });
    const ids = [...foreign, ...random];
    const batches: string[][] = [];
    // 99 ids and one of Bob's own per listen: the limit is 100, and Bob's proves the ack is per id.
    for (let i = 0; i < ids.length; i += 99) batches.push([...ids.slice(i, i + 99), own.taskId]);
    const wrong: Json[] = [];
    await forEachParallel(batches, 8, async (taskIds, n) => {
      const stream = await new Sep2663Client(replica(n), { token: BOB }).listen({ notifications: { taskIds } });
      try {
        const ack = await stream.nextMessage(() => true, 30_000);
        const snapshot = await stream.nextMessage(() => true, 30_000);
        if (JSON.stringify(ack.params.notifications.taskIds) !== JSON.stringify([own.taskId]) || snapshot.params.taskId !== own.taskId) {
          wrong.push({ ack, snapshot });
        }
      } finally {
        stream.close();
      }
    });
    expect(wrong.slice(0, 3), `${wrong.length} of ${batches.length} listens acked or reported a foreign id`).toEqual([]);
    await bob.cancelTask(own.taskId);
  });

  describe('on the 2025-11-25 wire and the tasks/create dialect (one session of the other principal)', () => {
    let session: LegacySession;
    beforeAll(async () => {
      session = await LegacySession.open(stack.shim().url, { token: BOB });
    });
    const legacy = (method: string) => (taskId: string): { headers: Record<string, string>; body: string } => ({
      headers: session.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: RPC_ID, method, params: { taskId } }),
    });

    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/status']) {
      it(`answer ${method} exactly as an unknown id does (-32602)`, { timeout: 120_000 }, async () => {
        await expectAllLikeUnknown(`legacy ${method}`, legacy(method));
      });
    }

    it('take an answer to a pushed input request (the legacy update) exactly as for an unknown id: 202, nothing settled', { timeout: 120_000 }, async () => {
      const answer = (taskId: string): { headers: Record<string, string>; body: string } => ({
        headers: session.headers(),
        body: JSON.stringify({ jsonrpc: '2.0', id: `task:${taskId}:${SEED_KEY}`, result: ANSWER[SEED_KEY] }),
      });
      const expected = await send(0, answer(newTaskId()));
      expect(expected.status).toBe(202);
      const mismatches: string[] = [];
      await forEachParallel([...foreign, ...random], PARALLEL, async (taskId, n) => {
        const got = await send(n, answer(taskId));
        if (got.status !== expected.status || got.text !== expected.text) mismatches.push(`${taskId}: HTTP ${got.status} ${got.text}`);
      });
      expect(mismatches.slice(0, 5), `${mismatches.length} answers differ from the unknown id's`).toEqual([]);
    });
  });

  it('changed nothing in any of those tasks', { timeout: 60_000 }, async () => {
    const after = await snapshot(foreign);
    const changed = foreign.filter((id, n) => n !== 1 && JSON.stringify(after.get(id)) !== JSON.stringify(before.get(id)));
    expect(changed.slice(0, 5), `${changed.length} tasks changed`).toEqual([]);
    // The running one moves by itself (progress); Bob could only have cancelled or rebound it.
    const runningBefore = before.get(foreign[1] as string).hash;
    const runningAfter = after.get(foreign[1] as string).hash;
    expect({ status: runningAfter.status, cancelRequested: runningAfter.cancelRequested, sessionId: runningAfter.sessionId }).toEqual({
      status: runningBefore.status,
      cancelRequested: runningBefore.cancelRequested,
      sessionId: runningBefore.sessionId,
    });
  });
});
