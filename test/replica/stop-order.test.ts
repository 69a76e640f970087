import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type ShimConfig } from '../../src/config/schema.js';
import { startNativeUpstream, type NativeUpstream } from '../../src/demo-native-upstream/server.js';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';
import { startDemoUpstream, type DemoUpstream } from '../../src/demo-upstream/server.js';
import { createLogger } from '../../src/observe/logger.js';
import { startShim, type Shim } from '../../src/shim.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil, Sep2663Client, textOf } from '../support/sep2663-client.js';

/**
 * How a replica stops, seen from outside: replicas started in this process on one Redis, one of
 * them stopped while it runs a task. The stores must close last: the worker first lets go of its
 * jobs, then the upstream clients close, so that neither a cut upstream call nor a closed store
 * ends up on the task.
 */

const LOCK_MS = 1_000;
const TERMINAL = ['completed', 'failed', 'cancelled'];
const HANDED_ON = { timeoutMs: 4 * LOCK_MS + 20_000, intervalMs: 100 };

interface Replica {
  shim: Shim;
  /** Every structured log line and every unexpected-error line of this replica. */
  lines: string[];
}

let redis: RedisServer;
let plain: DemoUpstream;
let native: NativeUpstream;
const replicas: Replica[] = [];
let prefixes = 0;

beforeAll(async () => {
  [redis, plain, native] = await Promise.all([startRedis(), startDemoUpstream({ port: 0 }), startNativeUpstream({ port: 0 })]);
});

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.shim.close().catch(() => undefined)));
});

afterAll(async () => {
  await Promise.all([plain?.close(), native?.close(), redis?.stop()]);
});

/** A fresh key prefix per test, shared by the replicas of that test. */
function prefix(): string {
  return `stop-order-${process.pid}-${++prefixes}`;
}

async function replica(upstreamUrl: string, redisPrefix: string, overrides: Partial<ShimConfig> = {}): Promise<Replica> {
  const lines: string[] = [];
  const config = {
    ...DEFAULT_CONFIG,
    port: 0,
    redisUrl: redis.url,
    redisPrefix,
    jobLockMs: LOCK_MS,
    policies: { tools: { ...DEMO_TOOL_POLICIES } },
    upstreamUrl,
    ...overrides,
  };
  const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
  const shim = await startShim(config, { logger, log: (line) => lines.push(line) });
  const started = { shim, lines };
  replicas.push(started);
  return started;
}

/** Stops a replica this test started, once. */
async function stop(r: Replica, how: (shim: Shim) => Promise<void>): Promise<void> {
  replicas.splice(replicas.indexOf(r), 1);
  await how(r.shim);
}

describe('stopping a replica that runs a task (Redis, in process)', () => {
  it('close() leaves a mirrored upstream task to another replica, which finishes it with its real result; the closing one logs nothing', { timeout: 60_000 }, async () => {
    const redisPrefix = prefix();
    const leaving = await replica(native.url, redisPrefix);
    const onLeaving = new Sep2663Client(leaving.shim.url);
    const work = await onLeaving.createTask('native_work', { seconds: 10, label: 'handed-on' });
    await onLeaving.waitForTask(work.taskId, (t) => /^Working handed-on: \d+%$/.test(t.statusMessage ?? ''));

    const staying = await replica(native.url, redisPrefix);
    await stop(leaving, (shim) => shim.close());

    const done = await new Sep2663Client(staying.shim.url).waitForStatus(work.taskId, TERMINAL, HANDED_ON);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Done handed-on');
    // Its upstream clients were cut after its worker let go: no unreachable upstream, no closed store.
    expect(leaving.lines).toEqual([]);
  });

  it('close() records nothing for a plain call it cuts: the other replica ends the task as lost, not as an upstream failure', { timeout: 60_000 }, async () => {
    const redisPrefix = prefix();
    const leaving = await replica(plain.url, redisPrefix);
    const onLeaving = new Sep2663Client(leaving.shim.url);
    const work = await onLeaving.createTask('slow_compute', { seconds: 60, label: 'cut' });
    await onLeaving.waitForTask(work.taskId, (t) => /^Computing cut/.test(t.statusMessage ?? ''));

    const staying = await replica(plain.url, redisPrefix);
    await stop(leaving, (shim) => shim.close());

    const ended = await new Sep2663Client(staying.shim.url).waitForStatus(work.taskId, TERMINAL, HANDED_ON);
    expect(ended.status).toBe('failed');
    expect(ended.error.message).toMatch(/^Task execution was lost/);
    expect(leaving.lines).toEqual([]);
  });

  it.each([
    ['close()', (shim: Shim) => shim.close()],
    ['shutdown()', (shim: Shim) => shim.shutdown({ graceMs: 20_000 })],
  ])('%s lets a job that ends within the grace write its result before the stores close', { timeout: 60_000 }, async (_name, how) => {
    const redisPrefix = prefix();
    const leaving = await replica(plain.url, redisPrefix);
    const onLeaving = new Sep2663Client(leaving.shim.url);
    const work = await onLeaving.createTask('slow_compute', { seconds: 2, label: 'in-grace' });
    await onLeaving.waitForTask(work.taskId, (t) => /^Computing in-grace/.test(t.statusMessage ?? ''));

    await stop(leaving, how);

    // Read once, at once, from a replica that runs no jobs: the closing replica wrote it, or no one did.
    const reader = await replica(plain.url, redisPrefix, { role: 'api' });
    const task = await new Sep2663Client(reader.shim.url).result('tasks/get', { taskId: work.taskId });
    expect(task.status).toBe('completed');
    expect(textOf(task.result)).toBe('Computed in-grace after 2s');
    expect(leaving.lines).toEqual([]);
  });
});

describe('a replica that cannot bind its port', () => {
  it('fails to start and closes every Redis connection it opened', { timeout: 30_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const admin = new Redis(redis.url);
    try {
      const clients = async (): Promise<number> => ((await admin.client('LIST')) as string).trim().split('\n').length;
      const before = await clients();
      const port = (taken.address() as AddressInfo).port;
      await expect(replica(plain.url, prefix(), { port })).rejects.toThrow(/EADDRINUSE/);
      expect(await pollUntil(clients, (n) => n <= before, { timeoutMs: 5_000, intervalMs: 50 })).toBeLessThanOrEqual(before);
    } finally {
      admin.disconnect();
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
