import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryTaskIdStore, TaskCancelledError, TasksClient, type TaskStatusUpdate } from '../../packages/client/src/index.js';
import { recordingFetch } from '../support/client-recording-fetch.js';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';

let shim: ShimProcess;

beforeAll(async () => {
  shim = await startShimProcess({ SHIM_POLL_INTERVAL_MS: '200' });
});

afterAll(async () => {
  await shim?.stop();
});

describe('cancelling a task through an AbortSignal', () => {
  it('sends tasks/cancel once and rejects with TaskCancelledError when the task ends cancelled', async () => {
    const recorder = recordingFetch();
    const store = new MemoryTaskIdStore();
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch, taskStore: store });
    const controller = new AbortController();
    const updates: TaskStatusUpdate[] = [];

    const call = helper.callTool(
      'slow_compute',
      { seconds: 10 },
      { signal: controller.signal, onTaskCreated: () => controller.abort(), onStatus: (update) => updates.push(update) },
    );
    const error = await call.catch((err: unknown) => err);

    expect(error).toBeInstanceOf(TaskCancelledError);
    const taskId = (error as TaskCancelledError).taskId;
    expect(recorder.of('tasks/cancel')).toHaveLength(1);
    expect(recorder.of('tasks/cancel')[0]!.headers.get('mcp-name')).toBe(taskId);
    expect(updates.map((u) => u.phase)).toContain('cancellation_requested');
    expect(updates.at(-1)!.phase).toBe('cancelled');
    expect(await store.list()).toEqual([]);
  });

  it('returns the result and reports cancellation_requested when the task completes before the cancel lands', async () => {
    // The tasks/cancel request is held back until the task has completed on the server.
    const observer = new TasksClient({ url: shim.url });
    let taskId = '';
    const recorder = recordingFetch(async (request) => {
      if (request.method !== 'tasks/cancel') return;
      await vi.waitFor(async () => expect((await observer.getTask(taskId)).status).toBe('completed'), { timeout: 10_000, interval: 50 });
    });
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch });
    const controller = new AbortController();
    const phases: string[] = [];

    const result = await helper.callTool(
      'slow_compute',
      { seconds: 1.5 },
      {
        signal: controller.signal,
        onTaskCreated: (task) => {
          taskId = task.taskId;
          controller.abort();
        },
        onStatus: (update) => phases.push(update.phase),
      },
    );

    expect((result.content[0] as { text: string }).text).toBe('Computed result after 1.5s');
    expect(phases).toContain('cancellation_requested');
    expect(phases.at(-1)).toBe('completed');
    expect(recorder.of('tasks/cancel')).toHaveLength(1);
  });

  it('an abort before the task exists rejects with the abort reason and sends no tasks/cancel', async () => {
    const recorder = recordingFetch();
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(helper.callTool('slow_compute', { seconds: 5 }, { signal: controller.signal })).rejects.toThrow('stop');
    expect(recorder.of('tasks/cancel')).toHaveLength(0);
  });

  it('cancelTask on a finished task is a plain acknowledgement', async () => {
    const helper = new TasksClient({ url: shim.url });
    const started = await helper.startTool('failing_job');
    expect(started.kind).toBe('task');
    const taskId = started.kind === 'task' ? started.task.taskId : '';
    await helper.waitForTask(taskId);
    await expect(helper.cancelTask(taskId)).resolves.toBeUndefined();
    expect((await helper.getTask(taskId)).status).toBe('completed');
  });
});
