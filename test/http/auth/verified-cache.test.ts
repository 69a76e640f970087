import { describe, expect, it } from 'vitest';
import { VerifiedTokenCache } from '../../../src/http/auth/verified-cache.js';

describe('the verified-token cache', () => {
  it('forgets a token at its exp, even when the maximum age is later', () => {
    const cache = new VerifiedTokenCache(10, 60_000);
    cache.set('token', 'alice', 1_000 + 5_000, 1_000);
    expect(cache.get('token', 5_999)).toBe('alice');
    expect(cache.get('token', 6_000)).toBeUndefined();
  });

  it('forgets a token after the maximum age, even when its exp is later', () => {
    const cache = new VerifiedTokenCache(10, 60_000);
    cache.set('token', 'alice', 10_000_000, 0);
    expect(cache.get('token', 59_999)).toBe('alice');
    expect(cache.get('token', 60_000)).toBeUndefined();
  });

  it('does not keep a token that has already expired', () => {
    const cache = new VerifiedTokenCache(10, 60_000);
    cache.set('token', 'alice', 1_000, 1_000);
    expect(cache.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the least recently used', () => {
    const cache = new VerifiedTokenCache(2, 60_000);
    cache.set('a', 'A', 50_000, 0);
    cache.set('b', 'B', 50_000, 0);
    expect(cache.get('a', 1)).toBe('A');
    cache.set('c', 'C', 50_000, 0);
    expect(cache.size).toBe(2);
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('a', 1)).toBe('A');
    expect(cache.get('c', 1)).toBe('C');
  });

  it('tells tokens apart that differ in one character', () => {
    const cache = new VerifiedTokenCache(10, 60_000);
    cache.set('token-1', 'alice', 50_000, 0);
    expect(cache.get('token-2', 1)).toBeUndefined();
  });
});
