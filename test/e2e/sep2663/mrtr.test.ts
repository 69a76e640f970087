import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';

const stack = useStack({ stores: ['redis'] });

/** A client that did not declare the tasks extension but can answer elicitations: MRTR applies. */
const NO_TASKS = { tasks: false, capabilities: { elicitation: {} } } as const;

describe('input for a synchronous call (MRTR)', () => {
  let other: ShimProcess;
  beforeAll(async () => {
    other = await stack.startShim();
  });
  const client = (url = stack.shim().url): Sep2663Client => new Sep2663Client(url, NO_TASKS);

  it('answers input_required with requestState, and the retry on another replica completes the call', async () => {
    const first = await client().result('tools/call', { name: 'confirm_delete', arguments: { filename: 'm.txt' } });
    expect(first.resultType).toBe('input_required');
    expect(first).not.toHaveProperty('taskId');
    const [key, request] = Object.entries(first.inputRequests)[0] as [string, { method: string; params: { message: string } }];
    expect(request.method).toBe('elicitation/create');
    expect(request.params.message).toBe('Delete m.txt?');
    const second = await client(other.url).result('tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'm.txt' },
      inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
      requestState: first.requestState,
    });
    expect(second.resultType).toBe('complete');
    expect(textOf(second)).toBe('Deleted m.txt');
  });

  it('asks again until every input of multi_input is answered', async () => {
    const call = { name: 'multi_input', arguments: {} };
    let answer = await client().result('tools/call', call);
    const answers: Record<string, unknown> = {};
    for (let round = 0; answer.resultType === 'input_required' && round < 4; round += 1) {
      const responses: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(answer.inputRequests) as Array<[string, { params: { requestedSchema: { properties: object } } }]>) {
        const field = Object.keys(request.params.requestedSchema.properties)[0] as string;
        responses[key] = { action: 'accept', content: { [field]: field === 'name' ? 'Ada' : 'green' } };
      }
      Object.assign(answers, responses);
      answer = await client().result('tools/call', { ...call, inputResponses: responses, requestState: answer.requestState });
    }
    expect(Object.keys(answers)).toHaveLength(2);
    expect(textOf(answer)).toBe('Ada likes green');
  });

  it('answers -32602 for a requestState replayed with other arguments', async () => {
    const first = await client().result('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    const reply = await client().request('tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'other.txt' },
      inputResponses: {},
      requestState: first.requestState,
    });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain('does not belong to this request');
  });

  it('answers -32602 for a forged or garbage requestState and for inputResponses without one', async () => {
    const forged = Buffer.from(JSON.stringify({ v: 1, t: 'AAAAAAAAAAAAAAAAAAAAAA' })).toString('base64url');
    for (const requestState of [forged, 'not-base64-json']) {
      const reply = await client().request('tools/call', { name: 'confirm_delete', arguments: { filename: 'x' }, inputResponses: {}, requestState });
      expect(reply.body.error).toEqual({ code: -32602, message: 'requestState is unknown or expired' });
    }
    const missing = await client().request('tools/call', { name: 'confirm_delete', arguments: { filename: 'x' }, inputResponses: {} });
    expect(missing.body.error.code).toBe(-32602);
  });

  it('answers -32602 for a malformed answer and applies nothing', async () => {
    const first = await client().result('tools/call', { name: 'confirm_delete', arguments: { filename: 'b.txt' } });
    const key = Object.keys(first.inputRequests)[0] as string;
    const bad = await client().request('tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'b.txt' },
      inputResponses: { [key]: { content: { confirm: true } } },
      requestState: first.requestState,
    });
    expect(bad.body.error.code).toBe(-32602);
    expect(bad.body.error.message).toContain(key);
    const good = await client().result('tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'b.txt' },
      inputResponses: { [key]: { action: 'decline' } },
      requestState: first.requestState,
    });
    expect(textOf(good)).toBe('Kept b.txt');
  });

  it('runs a synchronous call that needs no input as a plain call', async () => {
    expect(textOf(await client().result('tools/call', { name: 'greet', arguments: { name: 'M' } }))).toBe('Hello, M!');
  });
});
