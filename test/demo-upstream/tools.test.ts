import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';
import { startDemoUpstream, type DemoUpstream } from '../../src/demo-upstream/server.js';
import { connectDemoClient, textOf } from '../support/demo-upstream-client.js';

let upstream: DemoUpstream;
let client: Client;

beforeAll(async () => {
  upstream = await startDemoUpstream({ port: 0 });
  client = await connectDemoClient(upstream.url);
});

afterAll(async () => {
  await client?.close();
  await upstream?.close();
});

describe('demo upstream tools', () => {
  it('negotiates protocol 2025-11-25', () => {
    expect(client.getServerVersion()?.name).toBe('demo-upstream');
    expect((client.transport as { protocolVersion?: string } | undefined)?.protocolVersion).toBe('2025-11-25');
  });

  it('lists all eight tools with their input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(DEMO_TOOL_POLICIES).sort());
    const schemaOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    expect(schemaOf('greet')).toMatchObject({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    expect(schemaOf('slow_compute')).toMatchObject({
      properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } },
      required: ['seconds'],
    });
    expect(schemaOf('confirm_delete')).toMatchObject({ required: ['filename'] });
    expect(schemaOf('run_ci_pipeline')).toMatchObject({ properties: { commit: {}, stepMs: {} }, required: ['commit'] });
    for (const name of ['failing_job', 'protocol_error_job', 'multi_input', 'test_tool_with_task']) {
      expect(schemaOf(name)).toMatchObject({ type: 'object', properties: {} });
    }
  });

  it('greets by name', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Hello, Ada!');
  });

  it('answers slow_compute with zero seconds at once', async () => {
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0 } });
    expect(textOf(result)).toBe('Computed result after 0s');
  });

  it('reports slow_compute progress and names the computed value', async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0.6, label: 'pi' } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    expect(textOf(result)).toBe('Computed pi after 0.6s');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toMatchObject({ progress: 600, total: 600 });
    expect(progress.map((update) => update.progress)).toEqual([...progress.map((update) => update.progress)].sort((a, b) => a - b));
  });

  it('reports a failing job as a tool execution error', async () => {
    const result = await client.callTool({ name: 'failing_job', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('Job failed: simulated failure');
  });

  it('fails protocol_error_job with a JSON-RPC internal error, not a tool result', async () => {
    const call = client.callTool({ name: 'protocol_error_job', arguments: {} });
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toMatchObject({ code: -32603, data: { reason: 'simulated' } });
    await expect(call).rejects.toThrow(/Simulated protocol error/);
  });

  it('rejects an unknown tool with invalid params', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('reports bad arguments as a tool execution error the model can correct', async () => {
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: -1 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Invalid arguments for slow_compute/);
  });

  it('runs the CI pipeline through 342 tests, reporting each step', async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'run_ci_pipeline', arguments: { commit: 'abc123', stepMs: 0 } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    expect(textOf(result)).toBe('Pipeline passed for abc123: 342 tests');
    expect(progress).toHaveLength(342);
    expect(progress[0]).toEqual({ progress: 1, total: 342, message: 'Running tests (1/342)' });
    expect(progress.at(-1)).toEqual({ progress: 342, total: 342, message: 'Running tests (342/342)' });
  });
});
