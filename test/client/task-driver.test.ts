import { describe, expect, it } from 'vitest';
import { McpHttpError, NoInputHandlerError, TaskCancelledError, TaskFailedError, type TaskSnapshot } from '../../packages/client/src/index.js';
import { driveTask, MAX_TRANSIENT_POLL_FAILURES, newest, type DriverDeps } from '../../packages/client/src/task-driver.js';
import type { TaskListen } from '../../packages/client/src/task-listen.js';

let clock = Date.parse('2026-07-28T10:00:00.000Z');
function snapshot(patch: Partial<TaskSnapshot> = {}): TaskSnapshot {
  clock += 1;
  return { taskId: 't1', status: 'working', createdAt: '2026-07-28T10:00:00.000Z', lastUpdatedAt: new Date(clock).toISOString(), ttlMs: 60_000, pollIntervalMs: 5, ...patch };
}

const ask = (key: string) => ({ [key]: { method: 'elicitation/create', params: { message: key, requestedSchema: { type: 'object', properties: {} } } } });

/** Fake task methods: `gets` answers tasks/get in order (the last one repeats); everything is recorded. */
function fakeDeps(gets: Array<TaskSnapshot | Error | (() => TaskSnapshot)>, patch: Partial<DriverDeps> = {}) {
  const calls = { get: 0, updates: [] as Array<Record<string, unknown>>, cancels: 0, forgotten: [] as string[] };
  const deps: DriverDeps = {
    getTask: async () => {
      const next = gets[Math.min(calls.get++, gets.length - 1)]!;
      if (next instanceof Error) throw next;
      return typeof next === 'function' ? next() : next;
    },
    updateTask: async (_id, responses) => void calls.updates.push(responses),
    cancelTask: async () => void calls.cancels++,
    forget: async (id) => void calls.forgotten.push(id),
    maxPollIntervalMs: 20,
    ...patch,
  };
  return { deps, calls };
}

const done = (text = 'ok') => snapshot({ status: 'completed', result: { content: [{ type: 'text', text }] } });

describe('driveTask', () => {
  it('returns the result of a completed task and forgets its id', async () => {
    const { deps, calls } = fakeDeps([snapshot(), snapshot({ statusMessage: '50%' }), done()]);
    await expect(driveTask(snapshot(), deps)).resolves.toEqual({ content: [{ type: 'text', text: 'ok' }] });
    expect(calls.forgotten).toEqual(['t1']);
  });

  it('reads the result of a task whose handle already says completed', async () => {
    const { deps, calls } = fakeDeps([done('read')]);
    await expect(driveTask(snapshot({ status: 'completed' }), deps)).resolves.toMatchObject({ content: [{ text: 'read' }] });
    expect(calls.get).toBe(1);
  });

  it('asks each key once and sends each answer once, across stale polls and partial progress', async () => {
    const both = snapshot({ status: 'input_required', inputRequests: { ...ask('a'), ...ask('b') } });
    const onlyB = snapshot({ status: 'input_required', inputRequests: ask('b') });
    // The server lags: `a` and `b` stay listed after they were answered, then `c` shows up.
    const { deps, calls } = fakeDeps([both, both, both, onlyB, onlyB, snapshot({ status: 'input_required', inputRequests: ask('c') }), snapshot(), done()]);
    const asked: string[] = [];
    let releaseB!: () => void;
    const bAnswered = new Promise<void>((resolve) => (releaseB = resolve));
    const result = driveTask(both, deps, {
      onInputRequest: async ({ key }) => {
        asked.push(key);
        if (key === 'b') await bAnswered;
        return { action: 'accept', content: { key } };
      },
      onStatus: (update) => {
        if (update.inputRequests && Object.keys(update.inputRequests).join() === 'b') releaseB();
      },
    });
    await result;
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(calls.updates.map((u) => Object.keys(u))).toEqual([['a'], ['b'], ['c']]);
  });

  it('rejects naming the key when there is no handler, and leaves the task alone', async () => {
    const { deps, calls } = fakeDeps([]);
    const error = await driveTask(snapshot({ status: 'input_required', inputRequests: ask('confirm-1') }), deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoInputHandlerError);
    expect((error as Error).message).toContain('"confirm-1"');
    expect(calls).toMatchObject({ cancels: 0, forgotten: [] });
  });

  it('rejects with a handler error, and leaves the task alone', async () => {
    const { deps, calls } = fakeDeps([snapshot({ status: 'input_required', inputRequests: ask('k') })]);
    const failing = driveTask(snapshot({ status: 'input_required', inputRequests: ask('k') }), deps, {
      onInputRequest: () => {
        throw new Error('user closed the dialog');
      },
    });
    await expect(failing).rejects.toThrow('user closed the dialog');
    expect(calls).toMatchObject({ cancels: 0, updates: [], forgotten: [] });
  });

  it('uses the client-level handler when the call has none', async () => {
    const { deps, calls } = fakeDeps([done()], { onInputRequest: () => ({ action: 'decline' }) });
    await driveTask(snapshot({ status: 'input_required', inputRequests: ask('k') }), deps);
    expect(calls.updates).toEqual([{ k: { action: 'decline' } }]);
  });

  it('turns an abort into one tasks/cancel and reports cancellation_requested until the end', async () => {
    const controller = new AbortController();
    const { deps, calls } = fakeDeps([snapshot(), snapshot({ statusMessage: 'stopping' }), snapshot({ status: 'cancelled', statusMessage: 'by you' })]);
    const phases: string[] = [];
    const run = driveTask(snapshot(), deps, { signal: controller.signal, onStatus: (u) => phases.push(u.phase) });
    controller.abort();
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect((error as Error).message).toContain('by you');
    expect(calls.cancels).toBe(1);
    expect(phases[0]).toBe('working');
    expect(phases.slice(1, -1).every((p) => p === 'cancellation_requested')).toBe(true);
    expect(phases).toContain('cancellation_requested');
    expect(phases.at(-1)).toBe('cancelled');
  });

  it('asks nothing more once a cancel is on its way', async () => {
    const controller = new AbortController();
    controller.abort();
    const { deps, calls } = fakeDeps([snapshot({ status: 'input_required', inputRequests: ask('late') }), done()]);
    const asked: string[] = [];
    await driveTask(snapshot(), deps, { signal: controller.signal, onInputRequest: ({ key }) => void asked.push(key) });
    expect(asked).toEqual([]);
    expect(calls.cancels).toBe(1);
  });

  it('maps failed to TaskFailedError with the error object', async () => {
    const { deps } = fakeDeps([snapshot({ status: 'failed', error: { code: -32603, message: 'boom', data: { x: 1 } } })]);
    await expect(driveTask(snapshot(), deps)).rejects.toMatchObject({ name: 'TaskFailedError', code: -32603, data: { x: 1 }, taskId: 't1' });
    await expect(driveTask(snapshot(), deps)).rejects.toBeInstanceOf(TaskFailedError);
  });

  it(`tolerates ${MAX_TRANSIENT_POLL_FAILURES} transient poll failures in a row, not one more`, async () => {
    const transient = () => new McpHttpError('tasks/get', 503, 'Service Unavailable', '');
    const { deps } = fakeDeps([...Array.from({ length: MAX_TRANSIENT_POLL_FAILURES }, transient), done('survived')]);
    await expect(driveTask(snapshot(), deps)).resolves.toMatchObject({ content: [{ text: 'survived' }] });

    const { deps: worse } = fakeDeps([...Array.from({ length: MAX_TRANSIENT_POLL_FAILURES + 1 }, transient), done()]);
    await expect(driveTask(snapshot(), worse)).rejects.toBeInstanceOf(McpHttpError);

    const { deps: fatal } = fakeDeps([new McpHttpError('tasks/get', 401, 'Unauthorized', ''), done()]);
    await expect(driveTask(snapshot(), fatal)).rejects.toMatchObject({ httpStatus: 401 });
  });

  it('takes pushed snapshots as they come and polls only at the cap while the push is active', async () => {
    let push!: (task: TaskSnapshot) => void;
    const listen: TaskListen = { active: true, close: () => undefined };
    const { deps, calls } = fakeDeps([snapshot()], {
      maxPollIntervalMs: 60_000,
      listen: (_id, onTask) => {
        push = onTask;
        return listen;
      },
    });
    const run = driveTask(snapshot(), deps);
    setTimeout(() => push(done('pushed')), 30);
    await expect(run).resolves.toMatchObject({ content: [{ text: 'pushed' }] });
    expect(calls.get).toBe(0);
  });
});

describe('newest', () => {
  it('prefers the later update, and a terminal view over a non-terminal one', () => {
    const early = snapshot();
    const late = snapshot({ statusMessage: 'later' });
    expect(newest(early, late)).toBe(late);
    expect(newest(late, early)).toBe(late);
    const terminal = { ...early, status: 'cancelled' as const };
    expect(newest(terminal, late)).toBe(terminal);
  });
});
