import { describe, expect, it } from 'vitest';
import { PartsCache } from '../../src/observe/parts-cache.js';

describe('PartsCache', () => {
  it('keeps values apart by their parts, however the parts would join', () => {
    const cache = new PartsCache<number>(10);
    cache.set('a\u0000b', 'c', 'd', '', 1);
    cache.set('a', 'b\u0000c', 'd', '', 2);
    cache.set('a', 'b', 'c\u0000d', '', 3);
    expect([cache.get('a\u0000b', 'c', 'd', ''), cache.get('a', 'b\u0000c', 'd', ''), cache.get('a', 'b', 'c\u0000d', '')]).toEqual([1, 2, 3]);
    expect(cache.get('a', 'b', 'c', 'd')).toBeUndefined();
  });

  it('forgets everything once it holds its bound, so that client-chosen parts cannot grow it', () => {
    const cache = new PartsCache<number>(3);
    for (let i = 0; i < 3; i++) cache.set('w', `m${i}`, 'v', 'o', i);
    cache.set('w', 'm0', 'v', 'o', 10);
    expect(cache.get('w', 'm0', 'v', 'o')).toBe(10);
    expect(cache.get('w', 'm1', 'v', 'o')).toBe(1);
    cache.set('w', 'm3', 'v', 'o', 3);
    expect(cache.get('w', 'm1', 'v', 'o')).toBeUndefined();
    expect(cache.get('w', 'm3', 'v', 'o')).toBe(3);
  });
});
