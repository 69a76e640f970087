import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOptionsFrom, TasksClient, type TaskStatusUpdate } from '../../packages/client/src/index.js';

const UPDATE: TaskStatusUpdate = {
  taskId: 't1',
  status: 'working',
  phase: 'working',
  statusMessage: 'half way',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:01Z',
  ttlMs: null,
};

/** Polls `check` every 5 ms until it holds, for at most `ms`. */
async function eventually(check: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A full garbage collection, on demand (the worker runs without --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('callOptionsFrom: the SDK request options of an old call, at run time', () => {
  it('maps nothing to nothing, and ignores options the helper has no use for', () => {
    expect(callOptionsFrom(undefined)).toEqual({});
    expect(callOptionsFrom({ task: { ttl: 60_000 }, relatedRequestId: 3 })).toEqual({});
  });

  it('keeps the caller signal as it is', () => {
    const controller = new AbortController();
    expect(callOptionsFrom({ signal: controller.signal }).signal).toBe(controller.signal);
  });

  it('turns timeout into a deadline that aborts the call', async () => {
    const { signal } = callOptionsFrom({ timeout: 30 });
    expect(signal?.aborted).toBe(false);
    await eventually(() => signal!.aborted);
    expect((signal!.reason as Error).name).toBe('TimeoutError');
  });

  it('aborts on the caller signal or the deadline, whichever comes first', () => {
    const controller = new AbortController();
    const { signal } = callOptionsFrom({ signal: controller.signal, timeout: 60_000, maxTotalTimeout: 120_000 });
    expect(signal).not.toBe(controller.signal);
    controller.abort(new Error('user'));
    expect(signal!.aborted).toBe(true);
  });

  it('restarts the timeout on every status update when resetTimeoutOnProgress is set', async () => {
    const { signal, onStatus } = callOptionsFrom({ timeout: 80, resetTimeoutOnProgress: true });
    // Updates every 20 ms keep the call alive well past its 80 ms timeout.
    const started = Date.now();
    let lastUpdate = started;
    while (Date.now() - started < 250) {
      onStatus!(UPDATE);
      lastUpdate = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(signal!.aborted).toBe(false);
    await eventually(() => signal!.aborted);
    // The 80 ms ran from the last update, however late the loaded host ran the loop (Date.now()
    // counts whole milliseconds, so a timer may look one early).
    expect(Date.now() - lastUpdate).toBeGreaterThanOrEqual(80 - 1);
  });

  it('times out when a garbage collection runs before the deadline', async () => {
    // Combined with the caller's signal, each deadline is referred to only by the combined signal.
    const options = [{ timeout: 60 }, { maxTotalTimeout: 60 }, { timeout: 60, resetTimeoutOnProgress: true }];
    const signals = options.map((o) => callOptionsFrom({ ...o, signal: new AbortController().signal }).signal!);
    // Collected from a later turn, as a busy process would, with no stack frame of the call left.
    await new Promise((resolve) => setTimeout(resolve, 10));
    collectGarbage();
    collectGarbage();
    await eventually(() => signals.every((signal) => signal.aborted), 1_000);
    expect(signals.map((signal) => (signal.reason as Error).name)).toEqual(['TimeoutError', 'TimeoutError', 'TimeoutError']);
  });

  it('keeps maxTotalTimeout as a fixed cap even when progress restarts the timeout', async () => {
    const { signal, onStatus } = callOptionsFrom({ timeout: 1_000, maxTotalTimeout: 60, resetTimeoutOnProgress: true });
    const keepAlive = setInterval(() => onStatus!(UPDATE), 10);
    try {
      await eventually(() => signal!.aborted, 1_000);
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('feeds onprogress the message of each status update', () => {
    const seen: unknown[] = [];
    const { onStatus } = callOptionsFrom({ onprogress: (p) => seen.push(p) });
    onStatus!(UPDATE);
    onStatus!({ ...UPDATE, statusMessage: undefined, status: 'input_required', phase: 'input_required' });
    expect(seen).toEqual([
      { progress: 0, message: 'half way' },
      { progress: 0, message: 'input_required' },
    ]);
  });
});

describe('callOptionsFrom with the call\'s own options', () => {
  it('keeps them, runs an own onStatus after the mapped one, and adds an own signal to the deadlines', () => {
    const order: string[] = [];
    const created = (): void => {};
    const own = new AbortController();
    const mapped = callOptionsFrom(
      { onprogress: () => order.push('onprogress'), timeout: 60_000 },
      { onTaskCreated: created, onStatus: () => order.push('own'), signal: own.signal },
    );
    expect(mapped.onTaskCreated).toBe(created);
    mapped.onStatus!(UPDATE);
    expect(order).toEqual(['onprogress', 'own']);
    own.abort();
    expect(mapped.signal!.aborted).toBe(true);
  });

  it('returns the own options as they are when there are no request options', () => {
    const own = { onStatus: () => {} };
    expect(callOptionsFrom(undefined, own)).toBe(own);
  });
});

describe('getTask and cancelTask with a signal', () => {
  let server: Server;
  let url: string;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    // An endpoint that never answers: only the signal can end the request.
    server = createServer((req, res) => held.push(() => res.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    for (const release of held) release();
    await new Promise((resolve) => server.close(resolve));
  });

  it('abandons tasks/get when the signal aborts', async () => {
    const client = new TasksClient({ url });
    await expect(client.getTask('t1', { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('abandons tasks/cancel when the signal aborts', async () => {
    const client = new TasksClient({ url });
    const controller = new AbortController();
    const arrived = held.length;
    const pending = client.cancelTask('t1', { signal: controller.signal });
    await eventually(() => held.length > arrived);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
