import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/core/task.js';
import { decodeFlatTask, decodePolled, decodePolledHash, encodeTask, POLL_FIELDS } from '../../../src/store/redis/codec.js';
import { polledOf } from '../../../src/store/polled-task.js';
import { detailedTaskMembers, renderDetailedTask } from '../../../src/wire/sep2663/render.js';

const base: TaskRecord = {
  taskId: 'T1234567890123456789012',
  principal: 'alice',
  origin: 'sep2663',
  tool: 'slow_compute',
  arguments: { a: 1 },
  status: 'working',
  createdAt: 1_700_000_000_000,
  lastUpdatedAt: 1_700_000_000_500,
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
  inputRequests: {},
  inputResponses: {},
  cancelRequested: false,
  clientCapabilities: { elicitation: {} },
};

const ASK = { method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } };
const TRICKY = 'ünïcødé \u2028\u2029 "quoted" \\ back\\slash </script> \u0000\u001f\t\n lone \ud800 pair \ud83d\ude00 \u007f';

function completed(result: Record<string, unknown> | undefined): TaskRecord {
  return { ...base, status: 'completed', result };
}

const SHAPES: Record<string, TaskRecord> = {
  'working': base,
  'working with a statusMessage of escapes and unicode': { ...base, statusMessage: TRICKY },
  'cancelled': { ...base, status: 'cancelled', statusMessage: 'Cancelled by the client.' },
  'input_required, one request': { ...base, status: 'input_required', inputRequests: { 'elicit-0a1b2c3d': ASK } },
  'input_required, keys that an object puts first or treats specially': {
    ...base,
    status: 'input_required',
    statusMessage: 'needs "you"',
    inputRequests: Object.fromEntries([
      ['elicit-1', ASK],
      ['10', { method: 'roots/list', params: {} }],
      ['2', { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: TRICKY } }] } }],
      ['__proto__', ASK],
      ['constructor', ASK],
      ['4294967295', ASK],
      ['ключ', ASK],
      ['0', ASK],
    ]),
  },
  'input_required with no request left': { ...base, status: 'input_required' },
  'completed, a plain CallToolResult': completed({ content: [{ type: 'text', text: 'Hello, bench!' }] }),
  'completed, text with escapes and unicode': completed({ content: [{ type: 'text', text: TRICKY }], isError: false }),
  'completed, related-task _meta alone': completed({ content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' } } }),
  'completed, related-task among other _meta': completed({ _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' }, keep: 1 }, content: [] }),
  'completed, other _meta only': completed({ content: [], _meta: { keep: { nested: [1, 2] } } }),
  'completed, _meta null': completed({ content: [], _meta: null }),
  'completed, _meta not an object': completed({ content: [], _meta: 'odd' }),
  'completed, a resultType of its own': completed({ resultType: 'task', content: [] }),
  'completed, resultType last': completed({ content: [], resultType: 'weird' }),
  'completed, integer keys on top': completed({ content: [], 7: 'seven', 1: 'one' }),
  'completed, integer keys deeper': completed({ content: [{ type: 'text', text: 'x', 3: 'three' }] }),
  'completed, text that looks like a resultType key': completed({ content: [{ type: 'text', text: '{"resultType":"x","1":2}' }] }),
  'completed, a __proto__ key': completed(JSON.parse('{"__proto__":{"x":1},"content":[]}') as Record<string, unknown>),
  'completed, numbers JSON writes its own way': completed({ content: [], n: [1e21, 5e-324, -0, 0.1 + 0.2, 123456789012345680000, -1.5e-7] }),
  'completed, an empty result': completed({}),
  'completed, no result stored': completed(undefined),
  'failed with an error object': { ...base, status: 'failed', statusMessage: 'boom', error: { code: -32603, message: TRICKY, data: { why: [null, true] } } },
  'failed without an error object': { ...base, status: 'failed', statusMessage: 'boom' },
  'failed with neither error nor statusMessage': { ...base, status: 'failed' },
};

/** What a poll of the record gives from Redis: its hash as HGETALL and as an HMGET of POLL_FIELDS. */
function fromRedis(record: TaskRecord): { hmget: string; hgetall: string; whole: TaskRecord } {
  const fields = encodeTask(record);
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) Object.defineProperty(hash, fields[i]!, { value: fields[i + 1], enumerable: true, writable: true });
  const values = POLL_FIELDS.map((name) => (Object.hasOwn(hash, name) ? hash[name]! : null));
  const lean = decodePolled(record.taskId, values, record.principal)!;
  return {
    // The HMGET view never has input requests: the store reads the whole hash for input_required.
    hmget: record.status === 'input_required' ? detailedTaskMembers(decodePolledHash(record.taskId, hash, record.principal)!) : detailedTaskMembers(lean),
    hgetall: detailedTaskMembers(decodePolledHash(record.taskId, hash, record.principal)!),
    whole: decodeFlatTask(fields)!,
  };
}

function expectSame(record: TaskRecord): void {
  const { hmget, hgetall, whole } = fromRedis(record);
  const expected = JSON.stringify(renderDetailedTask(whole));
  expect(`{${hmget}}`).toBe(expected);
  expect(`{${hgetall}}`).toBe(expected);
  expect(`{${detailedTaskMembers(polledOf(whole))}}`).toBe(expected);
}

describe('DetailedTask as spliced text', () => {
  for (const [name, record] of Object.entries(SHAPES)) {
    it(`is byte for byte the stringified object: ${name}`, () => expectSame(record));
  }

  it('is byte for byte the stringified object for any JSON result, status message and input request', () => {
    const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 });
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(
        fc.constantFrom('working', 'input_required', 'completed', 'failed', 'cancelled' as const),
        fc.option(text, { nil: undefined }),
        fc.dictionary(fc.oneof(text, fc.constantFrom('resultType', '_meta', '1', '0', 'content')), json, { maxKeys: 5 }),
        fc.dictionary(fc.oneof(text, fc.constantFrom('1', '22', '__proto__')), json, { maxKeys: 3 }),
        fc.option(fc.record({ code: fc.integer(), message: text, data: json }, { requiredKeys: ['code', 'message'] }), { nil: undefined }),
        (status, statusMessage, result, requests, error) => {
          const inputRequests = Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, { method: 'elicitation/create', params: { v } }]));
          expectSame({ ...base, status, statusMessage, result, error, inputRequests });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('decodePolled', () => {
  it('reads a task of another principal, or a missing key, as nothing', () => {
    const values = POLL_FIELDS.map((name) => (name === 'principal' ? 'alice' : name === 'status' ? 'working' : '1'));
    expect(decodePolled('T', values, 'mallory')).toBeUndefined();
    expect(decodePolled('T', POLL_FIELDS.map(() => null), 'alice')).toBeUndefined();
    expect(decodePolledHash('T', {}, 'alice')).toBeUndefined();
    expect(decodePolledHash('T', { principal: 'alice', status: 'working' }, 'mallory')).toBeUndefined();
  });
});
