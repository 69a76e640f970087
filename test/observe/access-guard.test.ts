import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/observe/access-guard.js';

describe('isLoopbackHost', () => {
  it.each(['localhost', 'localhost:8080', 'LocalHost:1', '127.0.0.1', '127.0.0.1:80', '127.255.0.9:8080', '[::1]', '[::1]:8080'])('accepts %s', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([undefined, '', 'example.com', 'localhost.example.com', '127.0.0.1.example.com', '127.0.0.1:80:80', 'localhost:x', '[::2]:80', '[::1]x', '10.0.0.1', '0.0.0.0', '::1'])(
    'refuses %s',
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});
