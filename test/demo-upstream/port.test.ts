import { describe, expect, it } from 'vitest';
import { resolvePort } from '../../src/demo-upstream/port.js';

describe('demo upstream port', () => {
  it('takes --port over DEMO_UPSTREAM_PORT', () => {
    expect(resolvePort(['--port', '4001'], { DEMO_UPSTREAM_PORT: '4002' })).toBe(4001);
    expect(resolvePort(['--port=4003'], {})).toBe(4003);
  });

  it('falls back to DEMO_UPSTREAM_PORT, then to any free port', () => {
    expect(resolvePort([], { DEMO_UPSTREAM_PORT: '4002' })).toBe(4002);
    expect(resolvePort([], {})).toBe(0);
  });

  it('refuses a port that is not a number in range', () => {
    expect(() => resolvePort(['--port', 'http'], {})).toThrow('Invalid port: http');
    expect(() => resolvePort(['--port', '70000'], {})).toThrow('Invalid port: 70000');
    expect(() => resolvePort([], { DEMO_UPSTREAM_PORT: '-1' })).toThrow('Invalid port: -1');
  });
});
