import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import type { StoreKind } from '../../support/e2e-stack.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { pollUntil, Sep2663Client, textOf, type Json } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const TERMINAL = ['completed', 'failed', 'cancelled'];
let redis: RedisServer;
let demo: DemoUpstreamProcess;
/** `serve` in front of the demo upstream: itself a SEP-2663 server. */
let inner: ShimProcess;
/** A shim per store in front of `inner`. */
const outer = new Map<StoreKind, ShimProcess>();

beforeAll(async () => {
  [redis, demo] = await Promise.all([startRedis(), spawnDemoUpstream(['--port', '0'])]);
  inner = await startShimProcess({ upstreamUrl: demo.url });
  for (const kind of STORES) outer.set(kind, await startShimProcess({ upstreamUrl: inner.url, redisUrl: kind === 'redis' ? redis.url : undefined }));
});

afterAll(async () => {
  await Promise.all([...outer.values()].map((shim) => shim.stop()));
  await inner?.stop();
  demo?.killGroup();
  await demo?.exited;
  await redis?.stop();
});

describe.concurrent.each(STORES)('the shim as a SEP-2663 upstream of another shim (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(outer.get(store)!.url, { capabilities: { elicitation: {} } });

  it('discovers the inner shim as a SEP-2663 server and runs every tool in sep2663 mode', async () => {
    // The start-up lines about the upstream follow the listening line once discovery answered.
    const lines = await pollUntil(async () => outer.get(store)!.stdout(), (out) => out.includes('protocol:') && /^ {4}slow_compute /m.test(out));
    expect(lines).toContain('protocol: 2026-07-28 (discovered), runs tool tasks itself (SEP-2663 tasks extension)');
    expect(lines).toMatch(/^ {4}slow_compute +\S+(?: \(\d+ ms window\))? +sep2663 /m);
    expect(lines).not.toMatch(/^ {4}\S+ +\S+(?: \(\d+ ms window\))? +shim /m);
  });

  it("runs a long call as the inner shim's task, to the demo upstream's result", async () => {
    const c = client();
    const label = `nested-${store}`;
    const created = await c.createTask('slow_compute', { seconds: 2, label });
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 20_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe(`Computed ${label} after 2s`);
  });

  it("relays the inner task's elicitation as inputRequests and the tasks/update answer back through both shims", async () => {
    const c = client();
    const created = await c.createTask('confirm_delete', { filename: `nested-${store}.txt` });
    const asking: Json = await c.waitForStatus(created.taskId, 'input_required', { timeoutMs: 15_000 });
    const [[key, request]] = Object.entries(asking.inputRequests as Record<string, Json>) as [[string, Json]];
    expect(request.params.message).toBe(`Delete nested-${store}.txt?`);
    expect((await c.updateTask(created.taskId, { [key]: { action: 'accept', content: { confirm: true } } })).status).toBe(200);
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(textOf(done.result)).toBe(`Deleted nested-${store}.txt`);
  });

  it('answers a forbidden tool plainly through both shims', async () => {
    const reply = await client().callTool('greet', { name: `nest-${store}` });
    expect(reply.body.result.resultType).toBe('complete');
    expect(textOf(reply.body.result)).toContain(`nest-${store}`);
  });

  it("keeps a tool's isError result completed, as the inner shim reports it", async () => {
    const c = client();
    const created = await c.createTask('failing_job');
    const done = await c.waitForStatus(created.taskId, TERMINAL, { timeoutMs: 15_000 });
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(textOf(done.result)).toBe('Job failed: simulated failure');
  });
});
