import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { buildRequest, postRaw, Sep2663Client, TASKS_CAPABILITY, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
// A 3 s auto window (default 1 s): "slow_compute 0 s answers plainly" must hold on a loaded CI machine too.
const stack = useStack({ stores: STORES, record: true, env: { SHIM_AUTO_WINDOW_MS: '3000' } });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const REQUIRED_DATA = { requiredCapabilities: TASKS_CAPABILITY };

describe.concurrent.each(STORES)('polymorphic tools/call (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('a forbidden tool (greet) answers a plain CallToolResult even when the client declared the extension', async () => {
    const reply = await client().callTool('greet', { name: 'Ada' });
    expect(reply.status).toBe(200);
    const result = reply.body.result;
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('Hello, Ada!');
    expect(result).not.toHaveProperty('taskId');
  });

  it('an auto tool that ends inside the window (slow_compute 0 s) answers a plain result', async () => {
    const result = await client().result('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('Computed result after 0s');
    expect(result).not.toHaveProperty('taskId');
  });

  it('an auto tool that outlasts the window (slow_compute 5 s) answers a flat CreateTaskResult seeded working', async () => {
    const result = await client().result('tools/call', { name: 'slow_compute', arguments: { seconds: 5 } });
    expect(result.resultType).toBe('task');
    expect(result.status).toBe('working');
    expect(result.taskId).toMatch(/^[\x21-\x7E]{22,}$/);
    expect(result.createdAt).toMatch(ISO);
    expect(result.lastUpdatedAt).toMatch(ISO);
    expect(Number.isInteger(result.ttlMs) && result.ttlMs > 0).toBe(true);
    expect(Number.isInteger(result.pollIntervalMs) && result.pollIntervalMs > 0).toBe(true);
    for (const field of ['result', 'error', 'inputRequests', 'task', 'requestState', 'ttl', 'pollInterval', 'expiresAt']) {
      expect(result).not.toHaveProperty(field);
    }
    await client().cancelTask(result.taskId);
  });

  it('tasks/get right after the CreateTaskResult finds the task', async () => {
    const c = client();
    const created = await c.createTask('slow_compute', { seconds: 5 });
    const reply = await c.getTask(created.taskId);
    expect(reply.status).toBe(200);
    expect(reply.body.result).toMatchObject({ resultType: 'complete', taskId: created.taskId, createdAt: created.createdAt });
    expect(['working', 'completed']).toContain(reply.body.result.status);
    await c.cancelTask(created.taskId);
  });

  it('task ids are distinct per call', async () => {
    const c = client();
    const ids = await Promise.all([1, 2, 3].map(async () => (await c.createTask('failing_job')).taskId));
    expect(new Set(ids).size).toBe(3);
  });

  it.each(['failing_job', 'run_ci_pipeline'])(
    'a required tool (%s) without the extension declared answers HTTP 400 -32021 with requiredCapabilities, and never runs',
    async (tool) => {
      const marker = randomUUID();
      const args = tool === 'run_ci_pipeline' ? { commit: marker, stepMs: 1 } : { marker };
      const reply = await client().callTool(tool, args, { tasks: false });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe(-32021);
      expect(reply.body.error.data).toEqual(REQUIRED_DATA);
      expect(reply.body.id).toBeDefined();
      // A synchronous call would have reached the upstream before the answer; a queued one soon after.
      await new Sep2663Client(stack.shim(store).url).result('tools/call', { name: 'greet', arguments: { name: 'flush' } });
      expect(stack.recorder.toolCalls(tool).filter((m) => JSON.stringify(m.params).includes(marker))).toEqual([]);
    },
  );

  it('a client that declares only the legacy capabilities.tasks is treated as not declaring', async () => {
    const reply = await client().callTool('failing_job', {}, { tasks: false, capabilities: { tasks: { requests: { tools: { call: {} } } } } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe(-32021);
  });

  it('an optional tool without the extension runs synchronously (protocol_error_job answers its JSON-RPC error directly)', async () => {
    const marker = randomUUID();
    const reply = await client().callTool('protocol_error_job', { marker }, { tasks: false });
    expect(reply.status).toBe(200);
    // The upstream's own message (its SDK prefixes "MCP error -32603: "), carried unchanged.
    expect(reply.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/Simulated protocol error$/) });
    expect(reply.body).not.toHaveProperty('result');
    expect(stack.recorder.toolCalls('protocol_error_job').filter((m) => JSON.stringify(m.params).includes(marker))).toHaveLength(1);
  });

  it('an auto tool without the extension runs synchronously past the window and never answers a task', async () => {
    const result = await client().result('tools/call', { name: 'slow_compute', arguments: { seconds: 1.5 } }, { tasks: false });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('Computed result after 1.5s');
  });

  it('a legacy params.task is ignored: not an error, and not an opt-in', async () => {
    const c = client();
    const greet = await c.result('tools/call', { name: 'greet', arguments: { name: 'Bo' }, task: { ttl: 60_000 } });
    expect(textOf(greet)).toBe('Hello, Bo!');

    const sync = await c.result('tools/call', { name: 'slow_compute', arguments: { seconds: 1.5 }, task: { ttl: 60_000 } }, { tasks: false });
    expect(sync.resultType).toBe('complete');

    const refused = await c.request('tools/call', { name: 'failing_job', arguments: {}, task: { ttl: 60_000 } }, { tasks: false });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(-32021);
  });

  it('Mcp-Name may be base64-encoded even for an ASCII tool name', async () => {
    const { headers, body } = buildRequest('tools/call', { name: 'greet', arguments: { name: 'Cy' } });
    headers['mcp-name'] = `=?base64?${Buffer.from('greet').toString('base64')}?=`;
    const reply = await postRaw(client().url, JSON.stringify(body), headers);
    expect(reply.status).toBe(200);
    expect(textOf(reply.body.result)).toBe('Hello, Cy!');
  });
});
