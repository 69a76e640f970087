import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { polledOf, type TaskRecord } from '../../src/core/task.js';
import { decodeFlatTask, decodePolled, decodePolledHash, encodeTask, POLL_FIELDS } from '../../src/store/redis/codec.js';
import { taskRecord, TRICKY_TEXT } from '../support/task-record.js';

const base: TaskRecord = taskRecord({ arguments: { a: 1 }, clientCapabilities: { elicitation: {} } });

const ASK = { method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } };

function completed(result: Record<string, unknown> | undefined): TaskRecord {
  return { ...base, status: 'completed', result };
}

const SHAPES: Record<string, TaskRecord> = {
  'working': base,
  'working with a statusMessage of escapes and unicode': { ...base, statusMessage: TRICKY_TEXT },
  'cancelled': { ...base, status: 'cancelled', statusMessage: 'Cancelled by the client.' },
  'input_required, one request': { ...base, status: 'input_required', inputRequests: { 'elicit-0a1b2c3d': ASK } },
  'input_required, keys that an object puts first or treats specially': {
    ...base,
    status: 'input_required',
    statusMessage: 'needs "you"',
    inputRequests: Object.fromEntries([
      ['elicit-1', ASK],
      ['10', { method: 'roots/list', params: {} }],
      ['2', { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: TRICKY_TEXT } }] } }],
      ['__proto__', ASK],
      ['constructor', ASK],
      ['4294967295', ASK],
      ['ключ', ASK],
      ['0', ASK],
    ]),
  },
  'input_required with no request left': { ...base, status: 'input_required' },
  'completed, a plain CallToolResult': completed({ content: [{ type: 'text', text: 'Hello, bench!' }] }),
  'completed, text with escapes and unicode': completed({ content: [{ type: 'text', text: TRICKY_TEXT }], isError: false }),
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
  'failed with an error object': { ...base, status: 'failed', statusMessage: 'boom', error: { code: -32603, message: TRICKY_TEXT, data: { why: [null, true] } } },
  'failed without an error object': { ...base, status: 'failed', statusMessage: 'boom' },
  'failed with neither error nor statusMessage': { ...base, status: 'failed' },
};

/** A poll of the record as the Redis store reads it: an HMGET of POLL_FIELDS, or the whole hash for input_required. */
function pollsOf(record: TaskRecord): { hmget: unknown; hgetall: unknown; whole: TaskRecord } {
  const fields = encodeTask(record);
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) Object.defineProperty(hash, fields[i]!, { value: fields[i + 1], enumerable: true, writable: true });
  const values = POLL_FIELDS.map((name) => (Object.hasOwn(hash, name) ? hash[name]! : null));
  return {
    hmget: decodePolled(record.taskId, values, record.principal),
    hgetall: decodePolledHash(record.taskId, hash, record.principal),
    whole: decodeFlatTask(fields)!,
  };
}

function expectSame(record: TaskRecord): void {
  const { hmget, hgetall, whole } = pollsOf(record);
  const expected = polledOf(whole);
  // The HMGET view never has input requests: the store reads the whole hash for input_required.
  if (record.status !== 'input_required') expect(hmget).toEqual(expected);
  expect(hgetall).toEqual(expected);
  expect(JSON.stringify(hgetall)).toBe(JSON.stringify(expected));
  if (record.status !== 'input_required') expect(JSON.stringify(hmget)).toBe(JSON.stringify(expected));
}

describe('a poll decoded from Redis', () => {
  for (const [name, record] of Object.entries(SHAPES)) {
    it(`is the poll view of the whole record: ${name}`, () => expectSame(record));
  }

  it('is the poll view of the whole record for any JSON result, status message and input request', () => {
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

  it('reads a task of another principal, or a missing key, as nothing', () => {
    const values = POLL_FIELDS.map((name) => (name === 'principal' ? 'alice' : name === 'status' ? 'working' : '1'));
    expect(decodePolled('T', values, 'mallory')).toBeUndefined();
    expect(decodePolled('T', POLL_FIELDS.map(() => null), 'alice')).toBeUndefined();
    expect(decodePolledHash('T', {}, 'alice')).toBeUndefined();
    expect(decodePolledHash('T', { principal: 'alice', status: 'working' }, 'mallory')).toBeUndefined();
  });
});
