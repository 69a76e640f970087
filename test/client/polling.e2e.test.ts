import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskCancelledError, TasksClient } from '../../packages/client/src/index.js';
import { recordingFetch } from '../support/client-recording-fetch.js';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';

const POLL_MS = 200;
/** Timer and scheduling lateness tolerated on a busy test machine, on top of the +20 % jitter. */
const LATENESS_MS = 60;

let shim: ShimProcess;

beforeAll(async () => {
  shim = await startShimProcess({ SHIM_POLL_INTERVAL_MS: String(POLL_MS) });
});

afterAll(async () => {
  await shim?.stop();
});

describe('polling', () => {
  it('spaces tasks/get at least pollIntervalMs apart, with at most +20 % jitter', async () => {
    const recorder = recordingFetch();
    // A cap equal to the server's interval turns the backoff off, so every gap is floor + jitter.
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch, maxPollIntervalMs: POLL_MS });
    let createdAt = 0;
    await helper.callTool('slow_compute', { seconds: 3 }, { onTaskCreated: () => (createdAt = performance.now()) });

    const gets = recorder.of('tasks/get');
    expect(gets.length).toBeGreaterThanOrEqual(5);
    expect(gets[0]!.sentAt - createdAt).toBeGreaterThanOrEqual(POLL_MS);
    for (let i = 1; i < gets.length; i++) {
      expect(gets[i]!.sentAt - gets[i - 1]!.sentAt).toBeGreaterThanOrEqual(POLL_MS);
      // From the moment the previous answer was read to the next request: the delay alone.
      const delay = gets[i]!.sentAt - gets[i - 1]!.answeredAt!;
      expect(delay).toBeGreaterThanOrEqual(POLL_MS * 1.1 - 2);
      expect(delay).toBeLessThanOrEqual(POLL_MS * 1.2 + LATENESS_MS);
    }
  });

  it('backs off ×1.5 while the task stays unchanged and working, up to the cap', async () => {
    // run_ci_pipeline changes its status message once per step: a 1.5 s step leaves room for a few unchanged polls.
    const controller = new AbortController();
    const recorder = recordingFetch((request) => {
      if (request.method === 'tasks/get' && recorder.of('tasks/get').length >= 9) controller.abort();
    });
    const cap = 600;
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch, maxPollIntervalMs: cap });
    const error = await helper
      .callTool('run_ci_pipeline', { commit: 'abc123', stepMs: 1_500 }, { signal: controller.signal })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TaskCancelledError);

    const gets = recorder.of('tasks/get').slice(0, 9);
    const delays = gets.slice(1).map((g, i) => g.sentAt - gets[i]!.answeredAt!);
    const ratios = delays.slice(1).map((d, i) => d / delays[i]!);
    // Somewhere an unchanged poll was followed by a ×1.5 (±jitter) longer wait...
    expect(ratios.some((r) => r > 1.3 && r < 1.8)).toBe(true);
    expect(Math.max(...delays)).toBeGreaterThan(POLL_MS * 1.2 + LATENESS_MS);
    // ...and no wait went past the cap plus its jitter.
    expect(Math.max(...delays)).toBeLessThanOrEqual(cap * 1.2 + LATENESS_MS);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(POLL_MS * 1.1 - 2);
  });
});

describe('listen mode', () => {
  it('completes a task from notifications/tasks without waiting for a poll', async () => {
    const recorder = recordingFetch();
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch, listen: true });
    const result = await helper.callTool('slow_compute', { seconds: 2 });

    expect((result.content[0] as { text: string }).text).toBe('Computed result after 2s');
    expect(result).not.toHaveProperty('resultType');
    const listens = recorder.of('subscriptions/listen');
    expect(listens).toHaveLength(1);
    expect(listens[0]!.headers.get('mcp-name')).toBeNull();
    expect(listens[0]!.body.params).toMatchObject({ notifications: { taskIds: [expect.any(String)] } });
    // The fallback poll runs at the 30 s cap once the listen is acknowledged, so a 2 s task ends on a
    // pushed snapshot (polling alone would take about five tasks/get; one may slip in before the ack).
    expect(recorder.of('tasks/get').length).toBeLessThanOrEqual(1);
  });

  it('answers input requests that arrive by push', async () => {
    const recorder = recordingFetch();
    const helper = new TasksClient({ url: shim.url, fetch: recorder.fetch, listen: true, capabilities: { elicitation: {} } });
    const result = await helper.callTool('confirm_delete', { filename: 'pushed.txt' }, { onInputRequest: () => ({ action: 'accept', content: { confirm: true } }) });
    expect((result.content[0] as { text: string }).text).toBe('Deleted pushed.txt');
    expect(recorder.of('tasks/update')).toHaveLength(1);
    expect(recorder.of('tasks/get').length).toBeLessThanOrEqual(1);
  });

  it('falls back to polling silently when the listen is refused', async () => {
    const recorder = recordingFetch();
    const refusing: typeof fetch = async (input, init) => {
      if (String(init?.body).includes('"subscriptions/listen"')) return new Response('no push here', { status: 503 });
      return recorder.fetch(input, init);
    };
    const helper = new TasksClient({ url: shim.url, fetch: refusing, listen: true });
    const result = await helper.callTool('slow_compute', { seconds: 1.5 });
    expect((result.content[0] as { text: string }).text).toBe('Computed result after 1.5s');
    expect(recorder.of('tasks/get').length).toBeGreaterThan(0);
  });
});
