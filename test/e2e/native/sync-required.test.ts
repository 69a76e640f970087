import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../support/e2e-stack.js';
import { useNativeStack } from '../../support/native-stack.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';

const STORES: StoreKind[] = ['redis', 'embedded'];

/** The operator's policy answers these required tools synchronously; the upstream still runs them only as tasks. */
function syncPolicy(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mts-native-')), 'policy.json');
  writeFileSync(file, JSON.stringify({ tools: { native_work: 'forbidden', native_fail: 'forbidden' } }));
  return file;
}

const stack = useNativeStack({ stores: STORES, shimArgs: ['--policy', syncPolicy()] });

describe.concurrent.each(STORES)('a required upstream tool the shim answers synchronously (%s store)', (store) => {
  it('is called with a task upstream and answered with its result', async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const reply = await c.callTool('native_work', { seconds: 0.5, label: `sync-${store}` });
    expect(reply.body.result.resultType).toBe('complete');
    expect(textOf(reply.body.result)).toBe(`Done sync-${store}`);
    const upstream = (await stack.stats()).tasks.filter((t) => t.arguments?.label === `sync-${store}`);
    expect(upstream.map((t) => t.status)).toEqual(['completed']);
  });

  it("answers the upstream task's failure as the call's error", async () => {
    const c = new Sep2663Client(stack.shim(store).url);
    const reply = await c.callTool('native_fail', { reason: `sync ${store}` });
    expect(reply.body.error).toEqual({ code: -32603, message: `The upstream's task failed: Failed: sync ${store}` });
  });
});
