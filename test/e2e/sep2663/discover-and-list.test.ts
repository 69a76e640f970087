import { describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../../src/demo-upstream/policies.js';
import { useStack, type StoreKind } from '../../support/e2e-stack.js';
import { buildRequest, META, postRaw, Sep2663Client, TASKS_EXTENSION } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useStack({ stores: STORES });

describe.each(STORES)('server/discover and tools/list (%s store)', (store) => {
  const client = (): Sep2663Client => new Sep2663Client(stack.shim(store).url);

  it('server/discover advertises the tasks extension as {} and never the legacy capabilities.tasks', async () => {
    const reply = await client().request('server/discover', {}, { tasks: false, capabilities: {} });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    const result = reply.body.result;
    expect(result.capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(result.capabilities).not.toHaveProperty('tasks');
  });

  it('server/discover advertises only what the upstream serves: the demo serves tools, no resources or prompts', async () => {
    const result = await client().result('server/discover');
    expect(result.capabilities.tools).toBeDefined();
    expect(result.capabilities).not.toHaveProperty('resources');
    expect(result.capabilities).not.toHaveProperty('prompts');
  });

  it('server/discover answers resultType complete, supportedVersions with 2026-07-28, integer ttlMs and a cacheScope', async () => {
    const result = await client().result('server/discover');
    expect(result.resultType).toBe('complete');
    expect(result.supportedVersions).toContain('2026-07-28');
    expect(Number.isInteger(result.ttlMs) && result.ttlMs >= 0).toBe(true);
    expect(['public', 'private']).toContain(result.cacheScope);
    expect(result._meta[META.serverInfo]).toEqual({ name: 'mcp-tasks-shim', version: expect.any(String) });
  });

  it('server/discover echoes the request id', async () => {
    const reply = await client().request('server/discover', {}, { id: 'd1' });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 'd1' });
  });

  it('tools/list lists every upstream tool without an execution field, with resultType, ttlMs and cacheScope', async () => {
    const result = await client().result('tools/list', {}, { tasks: false });
    expect(result.resultType).toBe('complete');
    expect(Number.isInteger(result.ttlMs) && result.ttlMs >= 0).toBe(true);
    expect(['public', 'private']).toContain(result.cacheScope);
    const names = (result.tools as Array<{ name: string }>).map((t) => t.name).sort();
    expect(names).toEqual(Object.keys(DEMO_TOOL_POLICIES).sort());
    for (const tool of result.tools) {
      expect(tool).not.toHaveProperty('execution');
      expect(tool.inputSchema).toMatchObject({ type: 'object' });
    }
  });

  it('ping answers an empty complete result', async () => {
    const result = await client().result('ping');
    expect(result.resultType).toBe('complete');
  });

  it('a notification gets 202 with no body', async () => {
    const c = client();
    const { headers, body } = buildRequest('notifications/initialized');
    delete body.id;
    const reply = await postRaw(c.url, JSON.stringify(body), headers);
    expect(reply.status).toBe(202);
    expect(reply.text).toBe('');
  });

  it.each(['resources/list', 'prompts/list'])('%s, which the demo upstream does not serve, is HTTP 404 -32601', async (method) => {
    const reply = await client().request(method);
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe(-32601);
  });
});
