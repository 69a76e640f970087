import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../../src/demo-upstream/server.js';
import { connectDemoClient, textOf } from '../support/demo-upstream-client.js';

let upstream: DemoUpstream;
let client: Client;

beforeAll(async () => {
  upstream = await startDemoUpstream();
});

afterAll(async () => {
  await upstream?.close();
});

afterEach(async () => {
  await client?.close();
});

async function clientAnswering(answer: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>): Promise<Client> {
  client = await connectDemoClient(upstream.url);
  client.setRequestHandler(ElicitRequestSchema, (request) => answer(request));
  return client;
}

describe('confirm_delete', () => {
  it('asks once, in a form, whether to delete the file', async () => {
    const asked: ElicitRequest[] = [];
    await clientAnswering((request) => {
      asked.push(request);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.callTool({ name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.params).toMatchObject({
      mode: 'form',
      message: 'Delete a.txt?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
    });
  });

  it('deletes the file when the user confirms', async () => {
    await clientAnswering(() => ({ action: 'accept', content: { confirm: true } }));
    const result = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    expect(textOf(result)).toBe('Deleted a.txt');
  });

  it('keeps the file when the user declines', async () => {
    await clientAnswering(() => ({ action: 'decline' }));
    const result = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    expect(textOf(result)).toBe('Kept a.txt');
  });

  it('keeps the file when the user accepts without confirming', async () => {
    await clientAnswering(() => ({ action: 'accept', content: { confirm: false } }));
    const result = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    expect(textOf(result)).toBe('Kept a.txt');
  });
});

describe('multi_input', () => {
  it('has both questions outstanding before either is answered', async () => {
    const outstanding: ElicitRequest[] = [];
    await clientAnswering(async (request) => {
      outstanding.push(request);
      // Answering nothing until both have arrived proves the server did not ask one after the other.
      await vi.waitFor(() => expect(outstanding).toHaveLength(2), { timeout: 5_000 });
      const content: Record<string, string> = request.params.message.includes('name') ? { name: 'Ada' } : { color: 'teal' };
      return { action: 'accept', content };
    });
    const result = await client.callTool({ name: 'multi_input', arguments: {} });
    expect(textOf(result)).toBe('Ada likes teal');
  });

  it('puts a placeholder where the user declined', async () => {
    await clientAnswering((request) =>
      request.params.message.includes('name') ? { action: 'accept', content: { name: 'Ada' } } : { action: 'decline' },
    );
    const result = await client.callTool({ name: 'multi_input', arguments: {} });
    expect(textOf(result)).toBe('Ada likes (declined)');
  });

  it('completes when the colour answer leaves the colour out (the conformance suite answers {name, confirm} to both)', async () => {
    await clientAnswering((request) => ({ action: 'accept', content: { name: request.params.message.includes('name') ? 'Ada' : 'other', confirm: true } }));
    const result = await client.callTool({ name: 'multi_input', arguments: {} });
    expect(textOf(result)).toBe('Ada likes (not given)');
  });
});

describe('test_tool_with_task', () => {
  it('asks for the user name, works, then completes for that user', async () => {
    const asked: ElicitRequest[] = [];
    await clientAnswering((request) => {
      asked.push(request);
      return { action: 'accept', content: { user_name: 'grace' } };
    });
    const result = await client.callTool({ name: 'test_tool_with_task', arguments: {} });
    expect(textOf(result)).toBe('Task completed for grace');
    expect(asked[0]?.params).toMatchObject({ mode: 'form', requestedSchema: { properties: { user_name: { type: 'string' } } } });
  });

  it('takes a `name` answer as the user name (what the conformance suite sends)', async () => {
    await clientAnswering(() => ({ action: 'accept', content: { name: 'Alice' } }));
    const result = await client.callTool({ name: 'test_tool_with_task', arguments: {} });
    expect(textOf(result)).toBe('Task completed for Alice');
  });

  it('fails without working when the user gives no name', async () => {
    await clientAnswering(() => ({ action: 'cancel' }));
    const result = await client.callTool({ name: 'test_tool_with_task', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('No user name given (the user chose cancel)');
  });
});
