import { describe, expect, it } from 'vitest';
import { useNativeStack } from '../../support/native-stack.js';
import { Sep2663Client } from '../../support/sep2663-client.js';

const stack = useNativeStack({ stores: ['redis', 'embedded'] });
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe('the upstream gone while it runs a task', () => {
  it('fails the task on every store with a message naming the unreachable upstream, after bounded retries', { timeout: 60_000 }, async () => {
    const clients = (['redis', 'embedded'] as const).map((kind) => new Sep2663Client(stack.shim(kind).url));
    const created = await Promise.all(clients.map((c, i) => c.createTask('native_work', { seconds: 60, label: `gone-${i}` })));
    await Promise.all(created.map((t, i) => clients[i]!.waitForTask(t.taskId, (task) => (task.statusMessage ?? '').startsWith(`Working gone-${i}`))));
    stack.upstream.killGroup();
    await stack.upstream.exited;
    const killedAt = Date.now();
    const done = await Promise.all(created.map((t, i) => clients[i]!.waitForStatus(t.taskId, TERMINAL, { timeoutMs: 30_000, intervalMs: 200 })));
    for (const task of done) {
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toMatch(/^The upstream became unreachable while it ran task \w+ \(5 attempts\)/);
    }
    expect(Date.now() - killedAt).toBeLessThan(30_000);
  });
});
