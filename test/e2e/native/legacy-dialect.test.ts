import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { useNativeStack } from '../../support/native-stack.js';
import { pollUntil, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];
const stack = useNativeStack({ stores: STORES });

describe.each(STORES)('the tasks/create dialect, upstream tasks behind the shim (%s store)', (store) => {
  it("pushes the upstream task's elicitation on the GET stream and returns the pushed answer to the upstream", async () => {
    const session = await LegacySession.open(stack.shim(store).url);
    const stream = session.openGetStream();
    const created = await session.result('tasks/create', { name: 'native_confirm', arguments: { filename: `dialect-${store}.txt` } });
    const push = await stream.next((e) => e.message?.method === 'elicitation/create');
    expect(push.message.params.message).toBe(`Delete dialect-${store}.txt?`);
    expect(push.message.params._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: created.taskId });
    expect((await session.answer(push.message.id, { action: 'accept', content: { confirm: true } })).status).toBe(202);
    const done = await pollUntil(
      () => session.result('tasks/status', { taskId: created.taskId }),
      (t) => t.status === 'done' || t.status === 'error',
      { timeoutMs: 15_000 },
    );
    expect(done.status).toBe('done');
    expect(textOf(done.result)).toBe(`Deleted dialect-${store}.txt`);
    stream.close();
  });
});
