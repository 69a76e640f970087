import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/json-depth.js';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Padding that adds bytes but no depth, so that the length shortcut does not decide. */
const pad = `"${'x'.repeat(4 * MAX_JSON_DEPTH)}"`;

describe('nestsDeeperThan', () => {
  it('accepts nesting up to the bound and refuses one level more', () => {
    expect(nestsDeeperThan(bytes(`[${pad},${nested(MAX_JSON_DEPTH - 1)}]`), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(bytes(`[${pad},${nested(MAX_JSON_DEPTH)}]`), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(bytes(`{"a":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)},"p":${pad}}`), MAX_JSON_DEPTH)).toBe(true);
  });

  it('counts depth, not brackets: many shallow siblings pass', () => {
    expect(nestsDeeperThan(bytes(`[${Array.from({ length: 10_000 }, () => '[[]]').join(',')}]`), 3)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes and multi-byte characters included', () => {
    const text = JSON.stringify({ s: `${'['.repeat(1_000)}\\"[{ é 漢 🎉 "${'{'.repeat(1_000)}`, t: pad });
    expect(nestsDeeperThan(bytes(text), 4)).toBe(false);
    expect(nestsDeeperThan(bytes(JSON.stringify({ s: '\\', a: [[[[[[]]]]]], t: pad })), 4)).toBe(true);
  });

  it('walks 100,000 levels without recursion', () => {
    expect(nestsDeeperThan(bytes(nested(100_000)), MAX_JSON_DEPTH)).toBe(true);
  });
});
