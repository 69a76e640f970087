import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../src/http/json-depth.js';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { buildRequest, postRaw, Sep2663Client, textOf } from '../../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'] });

/** `depth` arrays inside each other, as JSON text. */
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const DEEP = nested(100_000);

/** A SEP-2663 tools/call of greet whose arguments carry `extra`, given as JSON text. */
function greetWith(extra: string): { headers: Record<string, string>; body: string } {
  const { headers, body } = buildRequest('tools/call', { name: 'greet', arguments: { name: 'deep', extra: '@' } }, { id: 'deep-1' });
  return { headers, body: JSON.stringify(body).replace('"@"', extra) };
}

describe(`JSON nesting deeper than ${MAX_JSON_DEPTH} levels`, () => {
  it('answers a SEP-2663 call -32600 with HTTP 400, its id, and no retryable flag', async () => {
    const { headers, body } = greetWith(DEEP);
    const reply = await postRaw(stack.shim().url, body, headers);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ jsonrpc: '2.0', id: 'deep-1', error: { code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } });
  });

  it('accepts a request nested exactly to the bound, and refuses one level more', async () => {
    // The request itself, params and arguments are three levels; `extra` holds the rest.
    const atBound = greetWith(nested(MAX_JSON_DEPTH - 3));
    const ok = await postRaw(stack.shim().url, atBound.body, atBound.headers);
    expect(ok.status).toBe(200);
    expect(textOf(ok.body.result)).toBe('Hello, deep!');
    const over = greetWith(nested(MAX_JSON_DEPTH - 2));
    expect((await postRaw(stack.shim().url, over.body, over.headers)).body.error.code).toBe(-32600);
  });

  it('answers a legacy initialize -32600 with HTTP 400 instead of failing at the upstream', async () => {
    const res = await fetch(stack.shim().url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":${DEEP}},"clientInfo":{"name":"deep","version":"1"}}}`,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } });
  });

  it('answers a legacy session request -32600 with HTTP 400, and the session still works', async () => {
    const session = await LegacySession.open(stack.shim().url);
    const res = await fetch(stack.shim().url, {
      method: 'POST',
      headers: session.headers(),
      body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":${DEEP}}}}`,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32600);
    expect((await session.result('tools/call', { name: 'greet', arguments: { name: 'after' } })).content[0].text).toBe('Hello, after!');
    expect(stack.shim().stderr()).not.toMatch(/unexpected error|Maximum call stack/);
    expect((await new Sep2663Client(stack.shim().url).request('ping')).status).toBe(200);
  });
});
