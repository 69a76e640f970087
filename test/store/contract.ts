import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newTaskId } from '../../src/core/ids.js';
import {
  isTerminal,
  polledOf,
  TASK_STATUSES,
  type InputRequest,
  type NewTask,
  type TaskRecord,
  type TaskStatus,
} from '../../src/core/task.js';
import { canTransition } from '../../src/mapping/transitions.js';
import type { TaskChange } from '../../src/core/task-change.js';
import type { TaskStore } from '../../src/store/task-store.js';

/** What the contract needs from a backend, fresh for every test. */
export interface StoreBackend {
  /** A store over this backend's data: a new replica where the backend is shared, else the one store. */
  open(): TaskStore;
  /** How many entries the backend still holds for tasks, to prove that expiry leaves nothing behind. */
  residue(): Promise<number>;
}

const ALICE = 'alice';
const MALLORY = 'mallory';
const ASK: InputRequest = {
  method: 'elicitation/create',
  params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } },
};
const RESULT = { content: [{ type: 'text', text: 'deployed' }], isError: false };
const ERROR = { code: -32603, message: 'upstream unreachable' };
const WAIT = { timeout: 5_000, interval: 20 };

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId: newTaskId(),
    principal: ALICE,
    origin: 'sep2663',
    tool: 'run_ci_pipeline',
    arguments: { branch: 'main' },
    createdAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
    clientCapabilities: { elicitation: {} },
    ...overrides,
  };
}

export function describeTaskStoreContract(name: string, backendFor: () => StoreBackend | Promise<StoreBackend>): void {
  describe(`${name} (TaskStore contract)`, () => {
    let backend: StoreBackend;
    let store: TaskStore;
    const opened = new Set<TaskStore>();

    function replica(): TaskStore {
      const opening = backend.open();
      opened.add(opening);
      return opening;
    }

    /** A fresh task of ALICE in `status`; every non-working one went through input_required with key q1. */
    async function taskIn(status: TaskStatus, on: TaskStore = store): Promise<TaskRecord> {
      const { taskId } = await on.create(newTask());
      if (status !== 'working') expect(await on.requestInput(taskId, 'q1', ASK, Date.now())).toBe(true);
      if (status === 'completed') expect(await on.finish(taskId, { status, result: RESULT }, Date.now())).toBe(true);
      if (status === 'failed') {
        expect(await on.finish(taskId, { status, error: ERROR, statusMessage: 'boom' }, Date.now())).toBe(true);
      }
      if (status === 'cancelled') expect((await on.cancel(taskId, ALICE, 'stop', Date.now()))?.changed).toBe(true);
      const task = await on.load(taskId);
      expect(task?.status).toBe(status);
      return task!;
    }

    /** Collects what `on` delivers, from the moment the subscription is live. */
    async function recordChanges(on: TaskStore): Promise<TaskChange[]> {
      const changes: TaskChange[] = [];
      on.subscribe((change) => changes.push(change));
      await on.subscriptionReady();
      return changes;
    }

    beforeEach(async () => {
      backend = await backendFor();
      store = replica();
    });

    afterEach(async () => {
      await Promise.all([...opened].map((each) => each.close()));
      opened.clear();
    });

    describe('create and read', () => {
      it('returns a new task as working, updated at creation, with nothing requested or cancelled', async () => {
        const input = newTask({ sessionId: 'session-1', clientInfo: { name: 'cli', version: '1.0.0' } });
        const created = await store.create(input);
        expect(created).toEqual({
          ...input,
          status: 'working',
          lastUpdatedAt: input.createdAt,
          inputRequests: {},
          inputResponses: {},
          cancelRequested: false,
        });
        expect(await store.get(input.taskId, ALICE)).toEqual(created);
      });

      it('makes a created task readable from another replica as soon as create resolves', async () => {
        const created = await store.create(newTask());
        expect(await replica().get(created.taskId, ALICE)).toEqual(created);
      });

      it('round-trips arguments, results, requests and answers byte for byte', async () => {
        const payload = {
          empty: {},
          emptyList: [],
          nested: [[1, [2, [3, {}]]], [{ deeper: [[], {}] }]],
          unicode: 'héllo — 你好 🚀 \u0000 "quoted" \\ / \u2028',
          largest: Number.MAX_SAFE_INTEGER,
          smallest: -Number.MAX_SAFE_INTEGER,
          beyondSafe: 2 ** 60,
          huge: 1e21,
          tiny: 5e-324,
          fraction: 0.1,
          nothing: null,
          no: false,
          blank: '',
        };
        const created = await store.create(newTask({ arguments: payload, clientCapabilities: {} }));
        const { taskId } = created;
        await store.requestInput(taskId, 'q🚀', { method: 'elicitation/create', params: payload }, Date.now());
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        await store.answerInput(taskId, ALICE, { 'q🚀': { action: 'accept', content: payload } }, Date.now());
        await store.finish(taskId, { status: 'completed', result: { content: [], structuredContent: payload } }, Date.now());

        const read = await replica().get(taskId, ALICE);
        expect(JSON.stringify(read?.arguments)).toBe(JSON.stringify(payload));
        expect(JSON.stringify(read?.clientCapabilities)).toBe('{}');
        const answers = { 'q🚀': { action: 'accept', content: payload } };
        expect(JSON.stringify(read?.inputResponses)).toBe(JSON.stringify(answers));
        expect(JSON.stringify(read?.inputRequests)).toBe(JSON.stringify({ q2: ASK }));
        expect(JSON.stringify(read?.result)).toBe(JSON.stringify({ content: [], structuredContent: payload }));
      });

      it('leaves optional fields absent when the caller left them out', async () => {
        const created = await store.create(newTask({ sessionId: undefined, statusMessage: undefined }));
        const read = await store.get(created.taskId, ALICE);
        for (const task of [created, read]) {
          for (const field of ['sessionId', 'statusMessage', 'startedAt', 'result', 'error', 'clientInfo']) {
            expect(task).not.toHaveProperty(field);
          }
        }
      });

      it('hands out copies: changing a returned record or the creation input changes nothing stored', async () => {
        const input = newTask({ arguments: { list: [1] } });
        const created = await store.create(input);
        (input.arguments.list as number[]).push(2);
        (created.arguments.list as number[]).push(3);
        created.status = 'completed';
        const read = await store.get(created.taskId, ALICE);
        (read!.arguments.list as number[]).push(4);
        expect(await store.get(created.taskId, ALICE)).toMatchObject({ status: 'working', arguments: { list: [1] } });
      });

      it('refuses a task id that is already in use', async () => {
        const input = newTask();
        await store.create(input);
        await expect(replica().create({ ...input, principal: MALLORY })).rejects.toThrow(/already exists/);
        expect((await store.load(input.taskId))?.principal).toBe(ALICE);
      });

      it('reads a task of another principal as undefined, exactly like an unknown id', async () => {
        const { taskId } = await store.create(newTask());
        expect(await store.get(taskId, MALLORY)).toBeUndefined();
        expect(await store.get(newTaskId(), ALICE)).toBeUndefined();
        expect(await store.load(newTaskId())).toBeUndefined();
        expect((await store.load(taskId))?.taskId).toBe(taskId);
      });

      it('polls what a status answer shows, as the typed fields of the record, in every status', async () => {
        for (const status of TASK_STATUSES) {
          const { taskId } = await taskIn(status);
          if (status === 'input_required') {
            await store.requestInput(taskId, '__proto__', { method: 'roots/list', params: {} }, Date.now());
            await store.requestInput(taskId, '7', { method: 'elicitation/create', params: { message: 'ünï "q" \u2028' } }, Date.now());
          }
          const polled = await replica().poll(taskId, ALICE);
          expect(polled).toEqual(polledOf((await store.get(taskId, ALICE))!));
          expect(polled?.status).toBe(status);
          expect(Object.keys(polled?.inputRequests ?? {}).length).toBe(status === 'input_required' ? 3 : 0);
        }
      });

      it('polls a task of another principal as undefined, exactly like an unknown id', async () => {
        const { taskId } = await taskIn('input_required');
        expect(await store.poll(taskId, MALLORY)).toBeUndefined();
        const completed = await taskIn('completed');
        expect(await store.poll(completed.taskId, MALLORY)).toBeUndefined();
        expect(await store.poll(newTaskId(), ALICE)).toBeUndefined();
      });

      it('lets another principal neither answer nor cancel a task, as if it did not exist', async () => {
        const { taskId } = await taskIn('input_required');
        const before = await store.load(taskId);
        expect(await store.answerInput(taskId, MALLORY, { q1: { action: 'accept' } }, Date.now())).toBeUndefined();
        expect(await store.cancel(taskId, MALLORY, 'mine now', Date.now())).toBeUndefined();
        expect(await store.load(taskId)).toEqual(before);
      });

      it('treats an unknown task id as not found in every operation', async () => {
        const taskId = newTaskId();
        const now = Date.now();
        expect(await store.markStarted(taskId, now)).toBeUndefined();
        await store.setStatusMessage(taskId, 'hello', now);
        expect(await store.requestInput(taskId, 'q1', ASK, now)).toBe(false);
        expect(await store.answerInput(taskId, ALICE, { q1: 1 }, now)).toBeUndefined();
        await store.withdrawInput(taskId, 'q1', now);
        expect(await store.finish(taskId, { status: 'completed', result: RESULT }, now)).toBe(false);
        expect(await store.cancel(taskId, ALICE, 'stop', now)).toBeUndefined();
        expect(await store.load(taskId)).toBeUndefined();
        expect(await backend.residue()).toBe(0);
      });

      it('answers ping while the backend is up', async () => {
        expect(await store.ping()).toBe(true);
      });
    });

    describe('transitions', () => {
      it.each(TASK_STATUSES)('completes a task from %s exactly when the transition table allows it', async (from) => {
        const before = await taskIn(from);
        const allowed = canTransition(from, 'completed');
        expect(await replica().finish(before.taskId, { status: 'completed', result: RESULT }, Date.now())).toBe(allowed);
        const after = await store.load(before.taskId);
        if (allowed) expect(after).toMatchObject({ status: 'completed', result: RESULT });
        else expect(after).toEqual(before);
      });

      it.each(TASK_STATUSES)('fails a task from %s exactly when the transition table allows it', async (from) => {
        const before = await taskIn(from);
        const allowed = canTransition(from, 'failed');
        const outcome = { status: 'failed', error: ERROR, statusMessage: 'upstream unreachable' } as const;
        expect(await replica().finish(before.taskId, outcome, Date.now())).toBe(allowed);
        const after = await store.load(before.taskId);
        if (allowed) expect(after).toMatchObject({ status: 'failed', error: ERROR, statusMessage: 'upstream unreachable' });
        else expect(after).toEqual(before);
      });

      it.each(TASK_STATUSES)('cancels a task from %s exactly when the transition table allows it', async (from) => {
        const before = await taskIn(from);
        const allowed = canTransition(from, 'cancelled');
        const outcome = await replica().cancel(before.taskId, ALICE, 'Cancelled by the client.', Date.now());
        expect(outcome?.changed).toBe(allowed);
        const after = await store.load(before.taskId);
        expect(outcome?.task).toEqual(after);
        if (allowed) {
          expect(after).toMatchObject({
            status: 'cancelled',
            cancelRequested: true,
            statusMessage: 'Cancelled by the client.',
          });
        } else {
          expect(after).toEqual(before);
        }
      });

      it.each(TASK_STATUSES)('accepts an input request on a %s task exactly when it is not terminal', async (from) => {
        const before = await taskIn(from);
        const allowed = canTransition(from, 'input_required') || from === 'input_required';
        expect(await replica().requestInput(before.taskId, 'q2', ASK, Date.now())).toBe(allowed);
        const after = await store.load(before.taskId);
        if (allowed) expect(after).toMatchObject({ status: 'input_required', inputRequests: { q2: ASK } });
        else expect(after).toEqual(before);
      });

      it.each(TASK_STATUSES)('resumes a %s task by answering q1 exactly when the table allows it', async (from) => {
        const before = await taskIn(from);
        const allowed = canTransition(from, 'working');
        const outcome = await replica().answerInput(before.taskId, ALICE, { q1: { action: 'accept' } }, Date.now());
        expect(outcome?.applied).toEqual(allowed ? ['q1'] : []);
        const after = await store.load(before.taskId);
        expect(outcome?.task).toEqual(after);
        if (allowed) {
          expect(after).toMatchObject({ status: 'working', inputRequests: {}, inputResponses: { q1: { action: 'accept' } } });
        } else {
          expect(after).toEqual(before);
        }
      });

      it.each(TASK_STATUSES.filter(isTerminal))('refuses to leave the terminal status %s', async (terminal) => {
        const before = await taskIn(terminal);
        const { taskId } = before;
        const now = Date.now();
        const other = replica();
        expect(await other.finish(taskId, { status: 'completed', result: RESULT }, now)).toBe(false);
        expect(await other.finish(taskId, { status: 'failed', error: ERROR, statusMessage: 'late' }, now)).toBe(false);
        expect(await other.requestInput(taskId, 'q9', ASK, now)).toBe(false);
        expect((await other.cancel(taskId, ALICE, 'late', now))?.changed).toBe(false);
        expect((await other.answerInput(taskId, ALICE, { q1: 'late' }, now))?.applied).toEqual([]);
        await other.withdrawInput(taskId, 'q1', now);
        await other.setStatusMessage(taskId, 'late', now);
        expect(await other.markStarted(taskId, now)).toEqual(before);
        expect(await store.load(taskId)).toEqual(before);
      });

      it('records startedAt once, when a worker first picks the task up', async () => {
        const { taskId, createdAt } = await store.create(newTask());
        const started = await replica().markStarted(taskId, createdAt + 10);
        expect(started).toMatchObject({ status: 'working', startedAt: createdAt + 10 });
        expect(await store.markStarted(taskId, createdAt + 20)).toEqual(started);
        expect(await store.load(taskId)).toEqual(started);
      });

      it('sets the status message of a live task and keeps its status', async () => {
        const { taskId } = await taskIn('input_required');
        await replica().setStatusMessage(taskId, 'step 2 of 5', Date.now());
        expect(await store.load(taskId)).toMatchObject({ status: 'input_required', statusMessage: 'step 2 of 5' });
      });

      it('binds a live task to its upstream task once, readable on every replica, without a change clients see', async () => {
        const { taskId } = await taskIn('input_required');
        const before = await store.load(taskId);
        const changes: TaskChange[] = [];
        const unsubscribe = store.subscribe((change) => changes.push(change));
        await store.subscriptionReady();
        expect(await replica().bindUpstream(taskId, 'up-1', 'session-1', Date.now())).toBe(true);
        expect(await store.bindUpstream(taskId, 'up-2', 'session-2', Date.now())).toBe(false);
        expect(await replica().load(taskId)).toEqual({ ...before, upstreamTaskId: 'up-1', upstreamSessionId: 'session-1' });
        // A later change proves the subscription delivers; the binding itself announced nothing.
        await store.setStatusMessage(taskId, 'after binding', Date.now());
        await vi.waitFor(() => expect(changes.length).toBe(1), WAIT);
        unsubscribe();
      });

      it('refuses to bind a terminal, unknown or expired task', async () => {
        const { taskId } = await taskIn('completed');
        expect(await store.bindUpstream(taskId, 'up-1', 'session-1', Date.now())).toBe(false);
        expect(await store.load(taskId)).not.toHaveProperty('upstreamTaskId');
        expect(await store.bindUpstream(newTaskId(), 'up-1', 'session-1', Date.now())).toBe(false);
        const short = await store.create(newTask({ ttlMs: 1_000 }));
        expect(await store.bindUpstream(short.taskId, 'up-1', 'session-1', short.createdAt + 1_000)).toBe(false);
      });

      it.each(['working', 'input_required'] as const)(
        'records a cancel of a %s task an upstream task backs without ending it, once, announced with cancelRequested',
        async (from) => {
          const { taskId } = await taskIn(from);
          expect(await store.bindUpstream(taskId, 'up-1', 'session-1', Date.now())).toBe(true);
          const changes = await recordChanges(store);
          const first = await replica().cancel(taskId, ALICE, 'Cancelled by the client.', Date.now(), 'waiting for the upstream');
          expect(first?.changed).toBe(true);
          expect(first?.task).toMatchObject({ status: from, cancelRequested: true, statusMessage: 'waiting for the upstream' });
          expect(await store.load(taskId)).toEqual(first?.task);
          // A second cancel (another client, another replica) changes nothing and announces nothing.
          const again = await replica().cancel(taskId, ALICE, 'Cancelled by the client.', Date.now(), 'again');
          expect(again).toEqual({ changed: false, task: first?.task });
          // The cancel's message stays until the record ends: progress does not replace it.
          await store.setStatusMessage(taskId, 'Working 50%', Date.now());
          expect((await store.load(taskId))?.statusMessage).toBe('waiting for the upstream');
          await vi.waitFor(() => expect(changes).toHaveLength(1), WAIT);
          expect(changes[0]).toEqual({ taskId, status: from, lastUpdatedAt: first?.task.lastUpdatedAt, cancelRequested: true });
          expect(await store.cancel(taskId, MALLORY, 'mine', Date.now(), 'mine')).toBeUndefined();
        },
      );

      it('ends a task whose cancel awaits its upstream with the answer: cancelled, or the outcome reached first', async () => {
        const [cancelled, completed] = await Promise.all([taskIn('working'), taskIn('working')]);
        for (const { taskId } of [cancelled, completed]) {
          await store.bindUpstream(taskId, 'up-1', 'session-1', Date.now());
          await store.cancel(taskId, ALICE, 'Cancelled by the client.', Date.now(), 'waiting');
        }
        expect(await replica().finish(cancelled.taskId, { status: 'cancelled', statusMessage: 'the upstream confirmed' }, Date.now())).toBe(true);
        expect(await store.load(cancelled.taskId)).toMatchObject({ status: 'cancelled', statusMessage: 'the upstream confirmed', cancelRequested: true });
        expect(await store.load(cancelled.taskId)).not.toHaveProperty('error');
        expect(await replica().finish(completed.taskId, { status: 'completed', result: RESULT }, Date.now())).toBe(true);
        expect(await store.load(completed.taskId)).toMatchObject({ status: 'completed', result: RESULT });
        // Ended: a late cancel is refused like any cancel of a terminal task.
        expect((await store.cancel(completed.taskId, ALICE, 'late', Date.now(), 'late'))?.changed).toBe(false);
        expect(await store.finish(cancelled.taskId, { status: 'cancelled', statusMessage: 'twice' }, Date.now())).toBe(false);
      });

      it('increases lastUpdatedAt on every change, even when changes share a millisecond', async () => {
        const { taskId, createdAt } = await store.create(newTask());
        const now = createdAt;
        const stamps = [createdAt];
        const changes: (() => Promise<unknown>)[] = [
          () => store.markStarted(taskId, now),
          () => store.setStatusMessage(taskId, 'step 1', now),
          () => store.requestInput(taskId, 'q1', ASK, now),
          () => store.requestInput(taskId, 'q2', ASK, now),
          () => store.answerInput(taskId, ALICE, { q1: 'yes' }, now),
          () => store.withdrawInput(taskId, 'q2', now),
          () => store.finish(taskId, { status: 'completed', result: RESULT }, now),
        ];
        for (const change of changes) {
          await change();
          stamps.push((await store.load(taskId))!.lastUpdatedAt);
        }
        for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
      });

      it('takes the caller clock as lastUpdatedAt when it is ahead of the last change', async () => {
        const { taskId, createdAt } = await store.create(newTask());
        await store.setStatusMessage(taskId, 'later', createdAt + 5_000);
        expect((await store.load(taskId))?.lastUpdatedAt).toBe(createdAt + 5_000);
      });
    });

    describe('input', () => {
      it('moves a working task to input_required and lists the request as outstanding', async () => {
        const { taskId } = await store.create(newTask());
        expect(await replica().requestInput(taskId, 'approve-1', ASK, Date.now())).toBe(true);
        expect(await store.get(taskId, ALICE)).toMatchObject({
          status: 'input_required',
          inputRequests: { 'approve-1': ASK },
        });
      });

      it('adds a second request while the task already waits for input', async () => {
        const { taskId } = await taskIn('input_required');
        expect(await store.requestInput(taskId, 'q2', ASK, Date.now())).toBe(true);
        expect(Object.keys((await store.load(taskId))!.inputRequests).sort()).toEqual(['q1', 'q2']);
      });

      it('refuses to reuse an input key, whether outstanding, answered or withdrawn', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'answered', ASK, Date.now());
        await store.requestInput(taskId, 'withdrawn', ASK, Date.now());
        await store.answerInput(taskId, ALICE, { answered: 'yes' }, Date.now());
        await store.withdrawInput(taskId, 'withdrawn', Date.now());
        const before = await store.load(taskId);
        for (const key of ['q1', 'answered', 'withdrawn']) {
          expect(await replica().requestInput(taskId, key, { method: 'roots/list', params: {} }, Date.now())).toBe(false);
        }
        expect(await store.load(taskId)).toEqual(before);
      });

      it('treats input keys that name Object.prototype members as plain keys', async () => {
        const { taskId } = await store.create(newTask());
        const unissued = await store.answerInput(taskId, ALICE, { constructor: 'x', toString: 'y' }, Date.now());
        expect(unissued?.applied).toEqual([]);
        expect(await store.requestInput(taskId, '__proto__', ASK, Date.now())).toBe(true);
        expect(await store.requestInput(taskId, 'constructor', ASK, Date.now())).toBe(true);
        const answers = JSON.parse('{"__proto__":"a","constructor":"b"}') as Record<string, unknown>;
        const outcome = await replica().answerInput(taskId, ALICE, answers, Date.now());
        expect(outcome?.applied.sort()).toEqual(['__proto__', 'constructor']);
        expect(Object.keys(outcome!.task.inputResponses).sort()).toEqual(['__proto__', 'constructor']);
        expect(outcome?.task.status).toBe('working');
      });

      it('keeps input_required and drops only the answered key on a partial answer', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        const outcome = await replica().answerInput(taskId, ALICE, { q2: { action: 'decline' } }, Date.now());
        expect(outcome?.applied).toEqual(['q2']);
        expect(outcome?.task).toMatchObject({
          status: 'input_required',
          inputRequests: { q1: ASK },
          inputResponses: { q2: { action: 'decline' } },
        });
        expect(outcome?.task.inputRequests).not.toHaveProperty('q2');
      });

      it('returns to working once the last outstanding request is answered', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        const outcome = await replica().answerInput(taskId, ALICE, { q1: 'a', q2: 'b' }, Date.now());
        expect(outcome?.applied.sort()).toEqual(['q1', 'q2']);
        expect(outcome?.task).toMatchObject({ status: 'working', inputRequests: {}, inputResponses: { q1: 'a', q2: 'b' } });
      });

      it('ignores answers for keys that are unknown or already answered', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        await store.answerInput(taskId, ALICE, { q1: 'first' }, Date.now());
        const before = await store.load(taskId);
        const outcome = await replica().answerInput(taskId, ALICE, { q1: 'second', never: 'issued' }, Date.now());
        expect(outcome).toEqual({ applied: [], task: before });
        expect(await store.load(taskId)).toEqual(before);
      });

      it('applies each key exactly once when the same answers race from several replicas', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        await store.requestInput(taskId, 'q3', ASK, Date.now());
        const racers = [0, 1, 2, 3, 4].map((n) => ({ n, store: replica() }));
        const outcomes = await Promise.all(
          racers.map(({ n, store: each }) => each.answerInput(taskId, ALICE, { q1: n, q2: n, q3: n }, Date.now())),
        );
        const applied = outcomes.flatMap((outcome) => outcome!.applied);
        expect(applied.sort()).toEqual(['q1', 'q2', 'q3']);
        const final = await store.load(taskId);
        outcomes.forEach((outcome, n) => {
          for (const key of outcome!.applied) expect(final?.inputResponses[key]).toBe(n);
        });
        expect(final?.status).toBe('working');
      });

      it('resumes the work exactly once when disjoint partial answers race', async () => {
        const { taskId } = await taskIn('input_required');
        const keys = ['q1', 'q2', 'q3', 'q4'];
        for (const key of keys.slice(1)) await store.requestInput(taskId, key, ASK, Date.now());
        const racers = keys.map((key) => ({ key, store: replica() }));
        const outcomes = await Promise.all(
          racers.map(({ key, store: each }) => each.answerInput(taskId, ALICE, { [key]: key }, Date.now())),
        );
        expect(outcomes.map((outcome) => outcome!.applied.length)).toEqual([1, 1, 1, 1]);
        expect(outcomes.filter((outcome) => outcome!.task.status === 'working')).toHaveLength(1);
        expect(await store.load(taskId)).toMatchObject({ status: 'working', inputRequests: {} });
      });

      it('keeps waiting when one of several requests is withdrawn, and resumes when the last one is', async () => {
        const { taskId } = await taskIn('input_required');
        await store.requestInput(taskId, 'q2', ASK, Date.now());
        await replica().withdrawInput(taskId, 'q1', Date.now());
        expect(await store.load(taskId)).toMatchObject({ status: 'input_required', inputRequests: { q2: ASK } });
        await replica().withdrawInput(taskId, 'q2', Date.now());
        expect(await store.load(taskId)).toMatchObject({ status: 'working', inputRequests: {}, inputResponses: {} });
      });

      it('ignores answers to a withdrawn request', async () => {
        const { taskId } = await taskIn('input_required');
        await store.withdrawInput(taskId, 'q1', Date.now());
        expect((await store.answerInput(taskId, ALICE, { q1: 'late' }, Date.now()))?.applied).toEqual([]);
      });
    });

    describe('expiry', () => {
      it('reads a task until createdAt + ttlMs and as undefined from then on, leaving nothing behind', async () => {
        const { taskId, createdAt } = await store.create(newTask({ ttlMs: 300 }));
        expect(await replica().get(taskId, ALICE)).toBeDefined();
        expect(await replica().poll(taskId, ALICE)).toBeDefined();
        await vi.waitFor(async () => expect(await store.get(taskId, ALICE)).toBeUndefined(), WAIT);
        expect(Date.now()).toBeGreaterThanOrEqual(createdAt + 300);
        expect(await store.poll(taskId, ALICE)).toBeUndefined();
        expect(await store.load(taskId)).toBeUndefined();
        await vi.waitFor(async () => expect(await backend.residue()).toBe(0), WAIT);
      });

      it('refuses every change dated at or after the deadline', async () => {
        const { taskId, createdAt } = await taskIn('input_required');
        const deadline = createdAt + 60_000;
        expect(await store.markStarted(taskId, deadline)).toBeUndefined();
        expect(await store.requestInput(taskId, 'q2', ASK, deadline)).toBe(false);
        expect(await store.answerInput(taskId, ALICE, { q1: 'late' }, deadline)).toBeUndefined();
        expect(await store.finish(taskId, { status: 'completed', result: RESULT }, deadline)).toBe(false);
        expect(await store.cancel(taskId, ALICE, 'late', deadline)).toBeUndefined();
        await store.withdrawInput(taskId, 'q1', deadline);
        await store.setStatusMessage(taskId, 'late', deadline);
        expect(await store.load(taskId)).toMatchObject({ status: 'input_required', inputRequests: { q1: ASK } });
      });

      it('never shows a task created already past its deadline', async () => {
        const { taskId } = await store.create(newTask({ createdAt: Date.now() - 10_000, ttlMs: 5_000 }));
        expect(await store.get(taskId, ALICE)).toBeUndefined();
        expect(await store.poll(taskId, ALICE)).toBeUndefined();
        expect(await store.load(taskId)).toBeUndefined();
        await vi.waitFor(async () => expect(await backend.residue()).toBe(0), WAIT);
      });
    });

    describe('subscribe', () => {
      it('delivers every change, in order, to a subscriber on another replica', async () => {
        const changes = await recordChanges(store);
        const writer = replica();
        const { taskId } = await writer.create(newTask());
        await writer.markStarted(taskId, Date.now());
        await writer.requestInput(taskId, 'q1', ASK, Date.now());
        await writer.setStatusMessage(taskId, 'waiting for approval', Date.now());
        await writer.answerInput(taskId, ALICE, { q1: 'yes' }, Date.now());
        await writer.finish(taskId, { status: 'completed', result: RESULT }, Date.now());
        await vi.waitFor(() => expect(changes).toHaveLength(5), WAIT);
        expect(changes.map((change) => change.status)).toEqual([
          'working',
          'input_required',
          'input_required',
          'working',
          'completed',
        ]);
        expect(changes.every((change) => change.taskId === taskId)).toBe(true);
        const stamps = changes.map((change) => change.lastUpdatedAt);
        for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
        expect(stamps.at(-1)).toBe((await writer.load(taskId))?.lastUpdatedAt);
      });

      it('delivers a change after the call that made it returns, never inside it', async () => {
        const seenInsideCall: boolean[] = [];
        let insideCall = false;
        store.subscribe(() => seenInsideCall.push(insideCall));
        await store.subscriptionReady();
        const { taskId } = await store.create(newTask());
        insideCall = true;
        const finishing = store.finish(taskId, { status: 'completed', result: RESULT }, Date.now());
        insideCall = false;
        await finishing;
        await vi.waitFor(() => expect(seenInsideCall).toEqual([false]), WAIT);
      });

      it('publishes nothing for a refused change and stops delivering after unsubscribe', async () => {
        const kept = await recordChanges(store);
        const dropped: TaskChange[] = [];
        const unsubscribe = store.subscribe((change) => dropped.push(change));
        unsubscribe();
        const terminal = await taskIn('completed', replica());
        await vi.waitFor(() => expect(kept.map((change) => change.status)).toEqual(['input_required', 'completed']), WAIT);
        const writer = replica();
        await writer.finish(terminal.taskId, { status: 'completed', result: RESULT }, Date.now());
        await writer.cancel(terminal.taskId, ALICE, 'late', Date.now());
        await writer.requestInput(terminal.taskId, 'q2', ASK, Date.now());
        // A change on another task marks the point by which any change before it has arrived.
        const marker = await writer.create(newTask());
        await writer.markStarted(marker.taskId, Date.now());
        await vi.waitFor(() => expect(kept.at(-1)?.taskId).toBe(marker.taskId), WAIT);
        expect(kept.map((change) => change.taskId)).toEqual([terminal.taskId, terminal.taskId, marker.taskId]);
        expect(dropped).toEqual([]);
      });
    });

    describe('sessions', () => {
      /** Waits until `changes` ends with a change of a fresh marker task: every change before it has arrived. */
      /**
       * Waits until a change made after everything before it has been delivered. On a Redis
       * Cluster changes of tasks in other slots come through other nodes and may overtake each
       * other, so the marker only has to arrive, not last.
       */
      async function settle(changes: TaskChange[]): Promise<void> {
        const writer = replica();
        const marker = await writer.create(newTask());
        await writer.markStarted(marker.taskId, Date.now());
        await vi.waitFor(() => expect(changes.some((change) => change.taskId === marker.taskId && change.status === 'working')).toBe(true), WAIT);
      }

      it('resolves subscriptionReady, and again when asked twice', async () => {
        store.subscribe(() => {});
        await expect(store.subscriptionReady()).resolves.toBeUndefined();
        await expect(store.subscriptionReady()).resolves.toBeUndefined();
      });

      it("carries the task's session in every change, and no session for a task without one", async () => {
        const changes = await recordChanges(store);
        const writer = replica();
        const bound = await writer.create(newTask({ sessionId: 'session-1' }));
        const unbound = await writer.create(newTask({ sessionId: undefined }));
        for (const { taskId } of [bound, unbound]) {
          await writer.markStarted(taskId, Date.now());
          await writer.requestInput(taskId, 'q1', ASK, Date.now());
          await writer.setStatusMessage(taskId, 'waiting', Date.now());
          await writer.answerInput(taskId, ALICE, { q1: 'yes' }, Date.now());
          await writer.requestInput(taskId, 'q2', ASK, Date.now());
          await writer.withdrawInput(taskId, 'q2', Date.now());
          await writer.finish(taskId, { status: 'completed', result: RESULT }, Date.now());
        }
        const cancelled = await writer.create(newTask({ sessionId: 'session-2' }));
        await writer.cancel(cancelled.taskId, ALICE, 'stop', Date.now());
        await vi.waitFor(() => expect(changes).toHaveLength(15), WAIT);
        const of = (taskId: string): TaskChange[] => changes.filter((change) => change.taskId === taskId);
        expect(of(bound.taskId)).toHaveLength(7);
        expect(of(bound.taskId).every((change) => change.sessionId === 'session-1')).toBe(true);
        expect(of(unbound.taskId)).toHaveLength(7);
        for (const change of of(unbound.taskId)) expect(change).not.toHaveProperty('sessionId');
        expect(of(cancelled.taskId)).toEqual([
          { taskId: cancelled.taskId, status: 'cancelled', lastUpdatedAt: expect.any(Number), sessionId: 'session-2' },
        ]);
      });

      it('binds a task to a session without touching lastUpdatedAt, and announces the new session', async () => {
        const changes = await recordChanges(store);
        const created = await store.create(newTask({ sessionId: 'session-1' }));
        const touched = await replica().touchSession(created.taskId, ALICE, 'session-2', created.createdAt + 1_000);
        expect(touched).toEqual({ ...created, sessionId: 'session-2' });
        expect(await replica().get(created.taskId, ALICE)).toEqual(touched);
        await vi.waitFor(() => expect(changes).toHaveLength(1), WAIT);
        expect(changes[0]).toEqual({
          taskId: created.taskId,
          status: 'working',
          lastUpdatedAt: created.lastUpdatedAt,
          sessionId: 'session-2',
        });
        // Later changes carry the new session.
        await store.setStatusMessage(created.taskId, 'step 2', Date.now());
        await vi.waitFor(() => expect(changes).toHaveLength(2), WAIT);
        expect(changes[1]).toMatchObject({ taskId: created.taskId, sessionId: 'session-2' });
      });

      it('binds a task that had no session yet', async () => {
        const created = await store.create(newTask({ sessionId: undefined }));
        expect(await store.touchSession(created.taskId, ALICE, 'session-1', Date.now())).toEqual({
          ...created,
          sessionId: 'session-1',
        });
      });

      it.each(TASK_STATUSES.filter(isTerminal))('binds a %s task too, which stays as it was otherwise', async (terminal) => {
        const all = await recordChanges(store);
        const before = await taskIn(terminal);
        // The change that made it terminal may still be on its way (a cluster node's pub/sub): not this test's.
        await vi.waitFor(() => expect(all.some((change) => change.taskId === before.taskId && change.status === terminal)).toBe(true), WAIT);
        const from = all.length;
        const touched = await replica().touchSession(before.taskId, ALICE, 'session-9', Date.now());
        expect(touched).toEqual({ ...before, sessionId: 'session-9' });
        expect(await store.load(before.taskId)).toEqual(touched);
        const expected = [{ taskId: before.taskId, status: terminal, lastUpdatedAt: before.lastUpdatedAt, sessionId: 'session-9' }];
        const mine = () => all.slice(from).filter((change) => change.taskId === before.taskId);
        await vi.waitFor(() => expect(mine()).toEqual(expected), WAIT);
        await settle(all);
        expect(mine()).toEqual(expected);
      });

      it('announces nothing when the session does not change', async () => {
        const created = await store.create(newTask({ sessionId: 'session-1' }));
        const changes = await recordChanges(store);
        expect(await replica().touchSession(created.taskId, ALICE, 'session-1', Date.now())).toEqual(created);
        await replica().touchSession(created.taskId, ALICE, 'session-2', Date.now());
        await replica().touchSession(created.taskId, ALICE, 'session-2', Date.now());
        await settle(changes);
        expect(changes.filter((change) => change.taskId === created.taskId).map((change) => change.sessionId)).toEqual([
          'session-2',
        ]);
      });

      it('reads a foreign, unknown or expired task as undefined, changing and announcing nothing', async () => {
        const created = await store.create(newTask({ sessionId: 'session-1' }));
        const changes = await recordChanges(store);
        const other = replica();
        expect(await other.touchSession(created.taskId, MALLORY, 'session-m', Date.now())).toBeUndefined();
        expect(await other.touchSession(newTaskId(), ALICE, 'session-2', Date.now())).toBeUndefined();
        const deadline = created.createdAt + created.ttlMs;
        expect(await other.touchSession(created.taskId, ALICE, 'session-2', deadline)).toBeUndefined();
        expect(await store.load(created.taskId)).toEqual(created);
        await settle(changes);
        expect(changes.filter((change) => change.taskId === created.taskId)).toEqual([]);
        expect(await store.load(newTaskId())).toBeUndefined();
      });

      it('keeps the expiry of a task it binds', async () => {
        const { taskId } = await store.create(newTask({ ttlMs: 300 }));
        await store.touchSession(taskId, ALICE, 'session-1', Date.now());
        await vi.waitFor(async () => expect(await store.load(taskId)).toBeUndefined(), WAIT);
        await vi.waitFor(async () => expect(await backend.residue()).toBe(0), WAIT);
      });
    });

    describe('open tasks and streams per principal', () => {
      const later = (): number => Date.now() + 60_000;

      it('holds up to the limit, on every replica, and refuses the next one saying how many are held', async () => {
        const other = replica();
        for (const member of ['a', 'b', 'c']) {
          expect(await store.holdOpen('tasks', ALICE, member, later(), 3, Date.now())).toEqual({ held: true, open: ['a', 'b', 'c'].indexOf(member) + 1 });
        }
        expect(await other.holdOpen('tasks', ALICE, 'd', later(), 3, Date.now())).toEqual({ held: false, open: 3 });
        // A member already held is renewed, never refused; another principal and the other kind count apart.
        expect(await other.holdOpen('tasks', ALICE, 'a', later(), 3, Date.now())).toEqual({ held: true, open: 3 });
        expect(await other.holdOpen('tasks', MALLORY, 'd', later(), 3, Date.now())).toEqual({ held: true, open: 1 });
        expect(await other.holdOpen('streams', ALICE, 'd', later(), 3, Date.now())).toEqual({ held: true, open: 1 });
      });

      it('stops counting a released member and one whose time lapsed', async () => {
        await store.holdOpen('streams', ALICE, 'a', later(), 2, Date.now());
        await store.holdOpen('streams', ALICE, 'b', Date.now() + 50, 2, Date.now());
        expect((await store.holdOpen('streams', ALICE, 'c', later(), 2, Date.now())).held).toBe(false);
        await store.releaseOpen('streams', ALICE, 'a');
        expect(await store.holdOpen('streams', ALICE, 'c', later(), 2, Date.now())).toEqual({ held: true, open: 2 });
        expect(await store.holdOpen('streams', ALICE, 'd', later(), 2, Date.now() + 100)).toEqual({ held: true, open: 2 });
      });

      it('takes no limit as -1', async () => {
        for (let i = 0; i < 5; i++) expect((await store.holdOpen('tasks', ALICE, `m${i}`, later(), -1, Date.now())).held).toBe(true);
      });

      it('releases a task when it finishes or is cancelled, and not when a change is refused', async () => {
        const tasks = await Promise.all([taskIn('working'), taskIn('working'), taskIn('completed')]);
        for (const task of tasks) await store.holdOpen('tasks', ALICE, task.taskId, later(), 3, Date.now());
        expect(await store.finish(tasks[2]!.taskId, { status: 'completed', result: RESULT }, Date.now())).toBe(false);
        expect((await store.holdOpen('tasks', ALICE, 'next', later(), 3, Date.now())).held).toBe(false);
        await store.finish(tasks[0]!.taskId, { status: 'completed', result: RESULT }, Date.now());
        await vi.waitFor(async () => expect((await store.holdOpen('tasks', ALICE, 'next', later(), 3, Date.now())).held).toBe(true), WAIT);
        await store.cancel(tasks[1]!.taskId, ALICE, 'stop', Date.now());
        await vi.waitFor(async () => expect((await store.holdOpen('tasks', ALICE, 'after', later(), 3, Date.now())).held).toBe(true), WAIT);
      });

      it('keeps holding a task whose cancel awaits its upstream until the upstream answers', async () => {
        const task = await taskIn('working');
        await store.bindUpstream(task.taskId, 'up-1', 'session-1', Date.now());
        await store.holdOpen('tasks', ALICE, task.taskId, later(), 1, Date.now());
        await store.cancel(task.taskId, ALICE, 'stop', Date.now(), 'waiting');
        expect((await store.holdOpen('tasks', ALICE, 'next', later(), 1, Date.now())).held).toBe(false);
        await store.finish(task.taskId, { status: 'cancelled', statusMessage: 'the upstream confirmed' }, Date.now());
        await vi.waitFor(async () => expect((await store.holdOpen('tasks', ALICE, 'next', later(), 1, Date.now())).held).toBe(true), WAIT);
      });
    });
  });
}
