import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../../src/wire/sep2663/iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes, for any millisecond of the years 1970–9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => isoTime(ms) === new Date(ms).toISOString()),
      { numRuns: 20_000 },
    );
  });

  it('writes what toISOString writes at the edges: epoch, leap days, century and year ends, the last 4-digit year', () => {
    const edges = [
      0, 1, 999, 1_000, 86_399_999, 86_400_000,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(2100, 1, 28, 12), Date.UTC(2100, 2, 1), Date.UTC(2400, 1, 29),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2026, 11, 2, 18, 48, 53, 756), 253_402_300_799_999,
    ];
    for (const ms of edges) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('leaves other times to toISOString, including its RangeError for an invalid one', () => {
    for (const ms of [-1, -62_198_755_200_000, 253_402_300_800_000, 8.64e15, 1.5, -0.5]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });

  it('answers right whatever the order of repeated times (it remembers the last two)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0, 1_733_380_000_000, 1_733_380_000_001, 253_402_300_799_999, -1), { minLength: 1, maxLength: 30 }), (times) =>
        times.every((ms) => isoTime(ms) === new Date(ms).toISOString()),
      ),
    );
  });
});
