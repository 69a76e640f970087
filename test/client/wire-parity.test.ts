import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as clientWire from '../../packages/client/src/wire.js';
import { isTerminal, TASK_STATUSES } from '../../src/core/task.js';
import { FIELD_TABLE } from '../../src/mapping/fields.js';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../src/wire/sep2663/constants.js';
import { decodeHeaderValue, encodeHeaderValue } from '../../src/wire/sep2663/header-value.js';

// The client package installs without the shim, so it keeps its own copy of the wire names it speaks.
describe('the client package speaks the same SEP-2663 wire as the shim', () => {
  it('uses the shim’s protocol version, extension id, _meta keys, statuses and field names', () => {
    expect(clientWire.PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
    expect(clientWire.TASKS_EXTENSION).toBe(TASKS_EXTENSION);
    for (const [key, value] of Object.entries(clientWire.META)) expect(META[key as keyof typeof META]).toBe(value);
    expect(clientWire.TASK_STATUSES).toEqual(TASK_STATUSES);
    for (const status of TASK_STATUSES) expect(clientWire.isTerminal(status)).toBe(isTerminal(status));
    expect(clientWire.TTL_FIELD).toBe(FIELD_TABLE.ttlMs.sep2663);
    expect(clientWire.POLL_INTERVAL_FIELD).toBe(FIELD_TABLE.pollIntervalMs.sep2663);
  });

  it('encodes header values exactly as the shim does, and the shim decodes them back', () => {
    const samples = ['greet', ' padded ', 'météo', '=?base64?aGk=?=', 'tab\there', '日本語', '', 'a\nb'];
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...samples), fc.string(), fc.string({ unit: 'binary' })), (value) => {
        const encoded = clientWire.encodeHeaderValue(value);
        expect(encoded).toBe(encodeHeaderValue(value));
        // A lone surrogate has no UTF-8 form: both sides send U+FFFD instead, so only well-formed text round-trips.
        if (!/\p{Surrogate}/u.test(value)) expect(decodeHeaderValue(encoded)).toBe(value);
      }),
    );
  });
});
