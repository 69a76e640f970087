import { describe, expect, it } from 'vitest';
import { carriedId, keyCarryingId } from '../../src/core/collect-input.js';

describe('input keys that carry the id of the request they answer', () => {
  it('carry numeric and string ids through, each key fresh', () => {
    const first = keyCarryingId('elicitation/create', 7);
    const second = keyCarryingId('elicitation/create', 7);
    expect(first).toMatch(/^elicit-[0-9a-f]{8}-u[A-Za-z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(carriedId(first)).toBe(7);
    expect(carriedId(keyCarryingId('sampling/createMessage', 'req:9/ä'))).toBe('req:9/ä');
    expect(keyCarryingId('sampling/createMessage', 1)).toMatch(/^sample-/);
  });

  it('find no id in keys that carry none or carry garbage', () => {
    expect(carriedId('elicit-0a1b2c3d')).toBeUndefined();
    expect(carriedId('q1')).toBeUndefined();
    expect(carriedId(`elicit-0a1b2c3d-u${Buffer.from('{"x":1}').toString('base64url')}`)).toBeUndefined();
    expect(carriedId('elicit-0a1b2c3d-u!!!')).toBeUndefined();
    expect(carriedId(`elicit-0a1b2c3d-u${Buffer.from('not json').toString('base64url')}`)).toBeUndefined();
  });
});
