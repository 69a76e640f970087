import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../../src/execution/queue-keys.js';
import { useStack } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

// No default shim: each test starts the roles it needs on the stack's Redis and upstream.
const stack = useStack({ stores: [] });

/** How long an api-only replica is watched to show that nobody runs its task. */
const UNRUN_WINDOW_MS = 2_000;
const PIPELINE = { commit: 'abc123', stepMs: 0 };
const PIPELINE_TEXT = 'Pipeline passed for abc123: 342 tests';

describe('replica roles: api replicas queue, worker replicas run', () => {
  let api: ShimProcess;
  let worker: ShimProcess | undefined;
  let redis: Redis;
  /** The shim's work queue, read as an operator would: default prefix `mts`. */
  const keys = queueKeys('mts');
  const client = (): Sep2663Client => new Sep2663Client(api.url);

  beforeAll(async () => {
    api = await stack.startShim({ args: ['--role', 'api'] });
    redis = new Redis(stack.redis.url);
  });
  afterAll(() => {
    redis?.disconnect();
  });

  it('an api replica alone queues the task and runs nothing: it stays working with its job waiting', async () => {
    const created = await client().createTask('run_ci_pipeline', PIPELINE);
    const until = Date.now() + UNRUN_WINDOW_MS;
    while (Date.now() < until) {
      const task = await client().result('tasks/get', { taskId: created.taskId });
      expect(task.status).toBe('working');
      expect(task.statusMessage ?? '').not.toMatch(/Running tests/);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await redis.lrange(keys.waiting, 0, -1)).toEqual([created.taskId]);
    expect(await redis.zcard(keys.leases)).toBe(0);

    worker = await stack.startShim({ args: ['--role', 'worker'] });
    const done = await client().waitForStatus(created.taskId, 'completed', { timeoutMs: 20_000 });
    expect(textOf(done.result)).toBe(PIPELINE_TEXT);
    expect(await redis.llen(keys.waiting)).toBe(0);
  });

  it('a task created on the api replica is run by the worker replica and read on the api replica', async () => {
    expect(worker).toBeDefined();
    const created = await client().createTask('run_ci_pipeline', { ...PIPELINE, commit: 'def456' });
    const done = await client().waitForStatus(created.taskId, 'completed', { timeoutMs: 20_000 });
    expect(textOf(done.result)).toBe('Pipeline passed for def456: 342 tests');
  });

  it('an api replica still answers synchronous calls itself, through its own upstream connection', async () => {
    const result = await client().result('tools/call', { name: 'greet', arguments: { name: 'api' } });
    expect(textOf(result)).toMatch(/api/);
  });

  it('a worker replica answers 404 on /mcp and serves /healthz, /readyz and /metrics only', async () => {
    const base = (worker as ShimProcess).baseUrl;
    const mcp = await new Sep2663Client(`${base}/mcp`).request('tools/list', {});
    expect(mcp.status).toBe(404);
    expect(mcp.text).toMatch(/role worker/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', upstream: 'ok' } });
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP /m);
    expect((await fetch(`${base}/dashboard`)).status).toBe(404);
  });

  it('api and worker replicas stop gracefully on SIGTERM (exit 0)', async () => {
    expect(await (worker as ShimProcess).stop()).toEqual({ code: 0, signal: null });
    expect(await api.stop()).toEqual({ code: 0, signal: null });
  });
});
