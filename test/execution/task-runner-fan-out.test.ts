import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeFanOut } from '../../src/core/change-fan-out.js';
import { newTaskId } from '../../src/core/ids.js';
import { TaskRunner } from '../../src/execution/task-runner.js';
import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { UpstreamGateway } from '../../src/upstream/gateway.js';
import { countSubscriptions } from '../support/counted-subscriptions.js';
import { spawnNativeUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';
import { pollUntil } from '../support/sep2663-client.js';

const JOBS = 5;
let upstream: DemoUpstreamProcess;
let gateway: UpstreamGateway;
let store: EmbeddedTaskStore;

beforeAll(async () => {
  upstream = await spawnNativeUpstream(['--port', '0', '--quiet']);
  gateway = new UpstreamGateway({ url: upstream.url, protocol: 'auto', clientInfo: { name: 'runner-fan-out-test', version: '1.0.0' } });
  store = new EmbeddedTaskStore();
}, 30_000);

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  upstream?.killGroup();
  await upstream?.exited;
});

describe('TaskRunner following upstream-backed jobs', () => {
  it('follows every running job through one store subscription, and cancels the one whose record asks', { timeout: 60_000 }, async () => {
    const { source, live } = countSubscriptions(store);
    const runner = new TaskRunner({ store: source, invoker: gateway, native: gateway, isIdempotent: () => false });
    const ids = Array.from({ length: JOBS }, () => newTaskId());
    for (const [i, taskId] of ids.entries()) {
      await store.create({
        taskId,
        principal: 'p',
        origin: 'sep2663',
        tool: 'native_work',
        arguments: { seconds: i === 0 ? 30 : 2, label: `job-${i}` },
        createdAt: Date.now(),
        ttlMs: 60_000,
        pollIntervalMs: 500,
        clientCapabilities: {},
      });
    }
    const running = ids.map((taskId) => runner.process({ taskId, lostRuns: 0 }));
    const bound = await Promise.all(ids.map((taskId) => pollUntil(() => store.load(taskId), (task) => task?.upstreamTaskId !== undefined)));
    expect(bound.every((task) => task?.status === 'working')).toBe(true);

    // A per-job subscription would show JOBS here.
    expect(live()).toBe(1);
    expect(changeFanOut(source).stats()).toMatchObject({ subscribed: true, tasks: JOBS });

    // The change event reaches the one job it names: only that upstream task is cancelled.
    await store.cancel(ids[0]!, 'p', 'Cancelled.', Date.now(), 'Cancel requested; waiting for the upstream.');
    await Promise.all(running);
    const ended = await Promise.all(ids.map((taskId) => store.load(taskId)));
    expect(ended.map((task) => task?.status)).toEqual(['cancelled', ...Array(JOBS - 1).fill('completed')]);
    expect(live()).toBe(0);
  });
});
