import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { buildRequest, type Json } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['embedded'], args: ['--anonymous-principal', 'per-address', '--max-open-tasks', '2'] });

const TOO_MANY_TASKS = 'Too many open tasks: this principal may hold 2 at once; retry when one of them ends';
/** A task that waits for input until cancelled. */
const BLOCKING = { name: 'confirm_delete', arguments: { filename: 'per-address.txt' } };

interface From {
  /** The client socket's own address (the loopback range is all ours on Linux). */
  localAddress: string;
  headers?: Record<string, string>;
}

/** One SEP-2663 request sent from a chosen local address. */
function call(url: string, from: From, method: string, params: Record<string, unknown>): Promise<{ status: number; body: Json }> {
  const built = buildRequest(method, params);
  const text = JSON.stringify(built.body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress: from.localAddress, headers: { ...built.headers, ...from.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

async function openTasks(url: string, from: From, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await call(url, from, 'tools/call', BLOCKING);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    ids.push(created.body.result.taskId as string);
  }
  return ids;
}

async function cancelAll(url: string, from: From, taskIds: string[]): Promise<void> {
  for (const taskId of taskIds) expect((await call(url, from, 'tasks/cancel', { taskId })).status).toBe(200);
}

describe('auth mode none with per-address principals (--anonymous-principal per-address)', () => {
  it('gives two client addresses separate open-task limits', async () => {
    const url = stack.shim().url;
    const first: From = { localAddress: '127.0.0.1' };
    const second: From = { localAddress: '127.0.0.2' };
    const held = await openTasks(url, first, 2);

    const refused = await call(url, first, 'tools/call', BLOCKING);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({ code: -32012, message: TOO_MANY_TASKS, data: { limit: 2, open: 2 } });

    const others = await openTasks(url, second, 2);
    await cancelAll(url, first, held);
    await cancelAll(url, second, others);
  });

  it("answers one address's task to another exactly like an unknown task", async () => {
    const url = stack.shim().url;
    const [taskId] = await openTasks(url, { localAddress: '127.0.0.1' }, 1);
    const foreign = await call(url, { localAddress: '127.0.0.3' }, 'tasks/get', { taskId });
    const unknown = await call(url, { localAddress: '127.0.0.3' }, 'tasks/get', { taskId: 'no-such-task-0123456789' });
    expect(foreign.body.error).toEqual(unknown.body.error);
    expect(foreign.body.error.message).toBe('Failed to retrieve task: Task not found');
    await cancelAll(url, { localAddress: '127.0.0.1' }, [taskId!]);
  });

  it('ignores X-Forwarded-For unless --trust-proxy, and then counts by its last entry', async () => {
    const untrusting = stack.shim().url;
    const spoofed = (address: string): From => ({ localAddress: '127.0.0.4', headers: { 'x-forwarded-for': address } });
    const held = await openTasks(untrusting, spoofed('10.0.0.1'), 2);
    // Another forwarded address from the same socket address is the same client here.
    expect((await call(untrusting, spoofed('10.0.0.2'), 'tools/call', BLOCKING)).status).toBe(429);
    await cancelAll(untrusting, spoofed('10.0.0.1'), held);

    const trusting = (await stack.startShim({ store: 'embedded', args: ['--trust-proxy'] })).url;
    // The proxy appends the address it saw; what the client wrote before it does not count.
    const viaProxy = (client: string): From => ({ localAddress: '127.0.0.1', headers: { 'x-forwarded-for': `203.0.113.9, ${client}` } });
    const first = await openTasks(trusting, viaProxy('10.0.0.1'), 2);
    expect((await call(trusting, viaProxy('10.0.0.1'), 'tools/call', BLOCKING)).status).toBe(429);
    const second = await openTasks(trusting, viaProxy('10.0.0.2'), 2);
    await cancelAll(trusting, viaProxy('10.0.0.1'), first);
    await cancelAll(trusting, viaProxy('10.0.0.2'), second);
  }, 30_000);
});
