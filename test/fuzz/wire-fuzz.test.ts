import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useStack } from '../support/e2e-stack.js';
import { LegacySession } from '../support/legacy-client.js';
import { Sep2663Client, textOf, type Json } from '../support/sep2663-client.js';

const stack = useStack({ stores: ['redis'], env: { SHIM_MAX_BODY_BYTES: '65536' } });

// -32000 is the upstream SDK's own transport error, passed through unchanged on the legacy wire.
const KNOWN_CODES = new Set([-32000, -32700, -32600, -32601, -32602, -32603, -32001, -32020, -32021, -32022, -32800]);
const STATUSES = new Set([200, 202, 400, 401, 403, 404, 405, 406, 413, 415]);
const METHODS = [
  'server/discover', 'tools/list', 'tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel', 'tasks/result', 'tasks/list',
  'tasks/create', 'tasks/status', 'subscriptions/listen', 'resources/list', 'prompts/get', 'ping', 'initialize',
  'notifications/initialized', 'notifications/cancelled', 'x/unknown', '',
];
const VERSIONS = ['2026-07-28', '2025-11-25', '2026-06-30', '2099-01-01', 'garbage', ''];

/** A JSON-RPC-ish message: mostly plausible, often subtly wrong. */
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.integer(), fc.constant(null)),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.double(), fc.object()),
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 }), fc.integer()),
    params: fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          taskId: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant('AAAAAAAAAAAAAAAAAAAAAA')),
          name: fc.oneof(fc.constantFrom('greet', 'slow_compute', 'nope'), fc.string({ maxLength: 20 })),
          arguments: fc.oneof(fc.object({ maxDepth: 2 }), fc.constant({ name: 'fuzz' }), fc.string()),
          inputResponses: fc.oneof(fc.object({ maxDepth: 2 }), fc.string(), fc.constant(null)),
          requestState: fc.oneof(fc.string({ maxLength: 40 }), fc.integer()),
          cursor: fc.string({ maxLength: 40 }),
          task: fc.oneof(fc.constant({}), fc.record({ ttl: fc.oneof(fc.integer(), fc.string()) })),
          notifications: fc.record({ taskIds: fc.oneof(fc.array(fc.string({ maxLength: 30 }), { maxLength: 120 }), fc.string()) }),
          _meta: fc.oneof(
            fc.constant(undefined),
            fc.record({
              'io.modelcontextprotocol/protocolVersion': fc.oneof(fc.constantFrom(...VERSIONS), fc.integer()),
              'io.modelcontextprotocol/clientCapabilities': fc.oneof(
                fc.constant({}),
                fc.constant({ extensions: { 'io.modelcontextprotocol/tasks': {} } }),
                fc.string(),
              ),
            }),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const headers = fc.record(
  {
    'mcp-protocol-version': fc.constantFrom(...VERSIONS),
    'mcp-method': fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 })),
    'mcp-name': fc.oneof(fc.string({ maxLength: 40 }), fc.constant('=?base64?!!!?='), fc.constant('=?base64?Z3JlZXQ=?=')),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8'),
    accept: fc.constantFrom('application/json, text/event-stream', 'text/html', '*/*'),
    'last-event-id': fc.string({ maxLength: 30 }),
  },
  { requiredKeys: [] },
);

/** Header values must be valid for fetch itself: drop what undici refuses to send. */
function sendable(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\x20-\x7E]*$/.test(v) && v.trim() === v));
}

function assertWellFormed(status: number, text: string, type: string): void {
  expect(STATUSES.has(status), `status ${status}: ${text}`).toBe(true);
  if (!text || type.includes('text/event-stream')) return;
  const body = JSON.parse(text) as Json;
  expect(body.jsonrpc).toBe('2.0');
  if (body.error !== undefined) {
    expect(Number.isInteger(body.error.code), text).toBe(true);
    expect(KNOWN_CODES.has(body.error.code) || body.error.code > -32000, `unexpected code in ${text}`).toBe(true);
    expect(typeof body.error.message).toBe('string');
  } else {
    expect(typeof body.result, text).toBe('object');
  }
}

async function send(url: string, body: string, h: Record<string, string>, method = 'POST'): Promise<void> {
  const abort = new AbortController();
  // A well-formed listen or tasks/result opens a stream: read its head, then leave.
  const timer = setTimeout(() => abort.abort(), 3_000);
  try {
    const res = await fetch(url, { method, headers: sendable(h), body: method === 'POST' ? body : undefined, signal: abort.signal });
    const type = res.headers.get('content-type') ?? '';
    const text = type.includes('text/event-stream') ? '' : await res.text();
    if (type.includes('text/event-stream')) abort.abort();
    assertWellFormed(res.status, text, type);
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  } finally {
    clearTimeout(timer);
  }
}

describe('fuzzing the three wires', () => {
  it('answers thousands of malformed SEP-2663 requests with well-formed errors', async () => {
    await fc.assert(
      fc.asyncProperty(message, headers, fc.boolean(), async (msg, h, raw) => {
        const body = raw ? JSON.stringify(msg).slice(0, Math.max(1, JSON.stringify(msg).length - 3)) : JSON.stringify(msg);
        await send(stack.shim().url, body, { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', ...h });
      }),
      { numRuns: 1500 },
    );
  }, 240_000);

  it('answers thousands of malformed legacy-session requests (2025-11-25 and tasks/create) with well-formed errors', async () => {
    const session = await LegacySession.open(stack.shim().url);
    await fc.assert(
      fc.asyncProperty(message, headers, fc.constantFrom('POST', 'GET', 'DELETE'), fc.boolean(), async (msg, h, method, ownSession) => {
        const { 'mcp-protocol-version': _version, ...rest } = h;
        const sessionHeaders = ownSession ? session.headers() : { 'content-type': 'application/json', 'mcp-session-id': 'fuzz-session' };
        // Never let the fuzzer end the session it fuzzes.
        const verb = method === 'DELETE' && ownSession ? 'POST' : method;
        await send(stack.shim().url, JSON.stringify(msg), { ...sessionHeaders, ...rest, 'mcp-protocol-version': '2025-11-25' }, verb);
      }),
      { numRuns: 1500 },
    );
  }, 240_000);

  it('still serves real clients afterwards, and logged no unexpected error', async () => {
    const modern = new Sep2663Client(stack.shim().url);
    expect(textOf(await modern.result('tools/call', { name: 'greet', arguments: { name: 'after' } }))).toBe('Hello, after!');
    const session = await LegacySession.open(stack.shim().url);
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(created.taskId).toEqual(expect.any(String));
    expect(stack.shim().stderr()).not.toMatch(/unexpected error|Unhandled|TypeError/);
  });
});
