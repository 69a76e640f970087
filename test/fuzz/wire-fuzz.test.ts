import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useStack } from '../support/e2e-stack.js';
import { LegacySession } from '../support/legacy-client.js';
import { buildRequest, Sep2663Client, textOf, type Json } from '../support/sep2663-client.js';

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
/** Properties every plain object has or inherits: as names they must find nothing in any table. */
const PROTOTYPE_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf', 'propertyIsEnumerable', '__defineGetter__', 'toLocaleString'];
const protoName = fc.constantFrom(...PROTOTYPE_NAMES);
/** What a 2026-07-28 client may get a result from; any other method is -32601. */
const SERVED = new Set([
  'server/discover', 'ping', 'tools/list', 'tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen',
  'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete',
]);
/** The edge's bound (src/http/json-depth.ts), restated: the fuzzer checks it from outside. */
const MAX_JSON_DEPTH = 128;

/** A JSON-RPC-ish message: mostly plausible, often subtly wrong. */
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.integer(), fc.constant(null)),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.double(), fc.object()),
    method: fc.oneof(fc.constantFrom(...METHODS), protoName, fc.string({ maxLength: 30 }), fc.integer()),
    params: fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          taskId: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant('AAAAAAAAAAAAAAAAAAAAAA'), protoName),
          name: fc.oneof(fc.constantFrom('greet', 'slow_compute', 'nope'), protoName, fc.string({ maxLength: 20 })),
          arguments: fc.oneof(fc.object({ maxDepth: 2 }), fc.constant({ name: 'fuzz' }), fc.string()),
          inputResponses: fc.oneof(fc.object({ maxDepth: 2 }), fc.dictionary(protoName, fc.jsonValue({ maxDepth: 2 })), fc.string(), fc.constant(null)),
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
    'mcp-method': fc.oneof(fc.constantFrom(...METHODS), protoName, fc.string({ maxLength: 20 })),
    'mcp-name': fc.oneof(fc.string({ maxLength: 40 }), protoName, fc.constant('=?base64?!!!?='), fc.constant('=?base64?Z3JlZXQ=?=')),
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

async function send(url: string, body: string, h: Record<string, string>, method = 'POST'): Promise<{ status: number; body?: Json } | undefined> {
  const abort = new AbortController();
  // A well-formed listen or tasks/result opens a stream: read its head, then leave.
  const timer = setTimeout(() => abort.abort(), 3_000);
  try {
    const res = await fetch(url, { method, headers: sendable(h), body: method === 'POST' ? body : undefined, signal: abort.signal });
    const type = res.headers.get('content-type') ?? '';
    const text = type.includes('text/event-stream') ? '' : await res.text();
    if (type.includes('text/event-stream')) abort.abort();
    assertWellFormed(res.status, text, type);
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : undefined };
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

describe('fuzzing the three wires', () => {
  it('answers thousands of malformed SEP-2663 requests with well-formed errors', async () => {
    await fc.assert(
      fc.asyncProperty(message, headers, fc.boolean(), async (msg, h, raw) => {
        const body = raw ? JSON.stringify(msg).slice(0, Math.max(1, JSON.stringify(msg).length - 3)) : JSON.stringify(msg);
        const answer = await send(stack.shim().url, body, { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', ...h });
        if (answer?.body?.result !== undefined) expect(SERVED.has(msg.method as string), `a result for method ${String(msg.method)}`).toBe(true);
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

  it('answers -32601 to every well-formed SEP-2663 request for a method it does not serve, prototype names included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(protoName, fc.string({ minLength: 1, maxLength: 30 })),
        fc.record({ name: fc.oneof(protoName, fc.constant('greet')), taskId: fc.oneof(protoName, fc.string({ maxLength: 30 })) }, { requiredKeys: [] }),
        async (method, params) => {
          fc.pre(!SERVED.has(method) && /^[\x21-\x7E]+$/.test(method));
          const { headers, body } = buildRequest(method, params, { id: 9, headers: { 'mcp-name': 'greet' } });
          const answer = await send(stack.shim().url, JSON.stringify(body), headers);
          expect(answer?.body).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32601, message: expect.any(String) } });
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);

  it('answers every request nested deeper than the bound -32600 with HTTP 400, wherever the nesting is, on both wires', async () => {
    const session = await LegacySession.open(stack.shim().url);
    const modern = new Sep2663Client(stack.shim().url);
    const deep = (depth: number, open: string, close: string): string => open.repeat(depth) + close.repeat(depth);
    await fc.assert(
      fc.asyncProperty(
        // Up to 8,000 levels: `{"a":` nesting that deep stays under the stack's 64 KiB body limit.
        fc.oneof(fc.integer({ min: 1, max: 2 * MAX_JSON_DEPTH }), fc.integer({ min: 1, max: 8_000 })),
        fc.constantFrom(['[', ']'], ['{"a":', '}']),
        fc.constantFrom('arguments', 'meta', 'id-sibling', 'legacy'),
        async (depth, [open, close], where) => {
          // `{"a":` needs a value at the bottom.
          const value = open === '[' ? deep(depth, '[', ']') : `${open.repeat(depth)}1${close.repeat(depth)}`;
          let answer;
          if (where === 'legacy') {
            answer = await send(stack.shim().url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"greet","arguments":{"name":${value}}}}`, session.headers());
          } else {
            const { headers, body } = buildRequest('tools/call', { name: 'greet', arguments: { name: 'deep' } }, { id: 5 });
            const text = JSON.stringify(body);
            const spliced =
              where === 'arguments' ? text.replace('"deep"', value) : where === 'meta' ? text.replace('"_meta":{', `"_meta":{"x":${value},`) : text.replace('"id":5', `"x":${value},"id":5`);
            answer = await send(modern.url, spliced, headers);
          }
          // The request, params and arguments (or _meta) add their own levels.
          const total = depth + (where === 'id-sibling' ? 1 : where === 'meta' ? 3 : 3);
          if (total > MAX_JSON_DEPTH) {
            expect(answer?.status).toBe(400);
            expect(answer?.body.error).toEqual({ code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` });
            expect(answer?.body.id).toBe(5);
          } else {
            expect(answer?.body?.error?.code).not.toBe(-32600);
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 240_000);

  it('still serves real clients afterwards, and logged no unexpected error', async () => {
    const modern = new Sep2663Client(stack.shim().url);
    expect(textOf(await modern.result('tools/call', { name: 'greet', arguments: { name: 'after' } }))).toBe('Hello, after!');
    const session = await LegacySession.open(stack.shim().url);
    const created = await session.result('tasks/create', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(created.taskId).toEqual(expect.any(String));
    expect(stack.shim().stderr()).not.toMatch(/unexpected error|Unhandled|TypeError|Maximum call stack/);
  });
});
