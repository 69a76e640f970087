import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../../src/demo-upstream/policies.js';
import { useStack } from '../../support/e2e-stack.js';
import { pollUntil, Sep2663Client } from '../../support/sep2663-client.js';

const stack = useStack({ stores: [] });

describe('the policy file reloaded on SIGHUP', () => {
  it('applies a changed tool policy to the next call and says which tool changed', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'mts-policy-reload-')), 'policy.json');
    writeFileSync(path, JSON.stringify({ tools: DEMO_TOOL_POLICIES }));
    // The last --policy wins over the harness's own.
    const shim = await stack.startShim({ store: 'embedded', args: ['--policy', path] });
    const client = new Sep2663Client(shim.url);
    const plain = await client.callTool('greet', { name: 'P' }, { tasks: false });
    expect(plain.body.result.resultType).toBe('complete');

    writeFileSync(path, JSON.stringify({ tools: { ...DEMO_TOOL_POLICIES, greet: 'required' } }));
    shim.signal('SIGHUP');
    await pollUntil(async () => shim.stderr(), (text) => text.includes('  - policies: greet forbidden → required'));
    const refused = await client.callTool('greet', { name: 'P' }, { tasks: false });
    expect(refused.body.error.code).toBe(-32021);
    expect((await client.createTask('greet', { name: 'P' })).resultType).toBe('task');
  });
});
