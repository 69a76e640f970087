import { describe, expect, it } from 'vitest';
import { LimitUsage } from '../../src/observe/limit-usage.js';

describe('LimitUsage: the fullest principal of the last minute', () => {
  it('keeps the highest count per kind for a minute, then forgets it', () => {
    let now = 1_000_000;
    const usage = new LimitUsage(() => now);
    expect(usage.highest('tasks')).toBe(0);
    usage.held('tasks', 4);
    usage.held('tasks', 2);
    usage.held('sessions', 1);
    expect([usage.highest('tasks'), usage.highest('sessions'), usage.highest('streams')]).toEqual([4, 1, 0]);
    now += 30_000;
    usage.held('tasks', 3);
    expect(usage.highest('tasks')).toBe(4);
    // The 4 was seen a minute ago; the 3 half a minute ago.
    now += 35_000;
    expect(usage.highest('tasks')).toBe(3);
    now += 60_000;
    expect(usage.highest('tasks')).toBe(0);
    // A slot reused a minute later starts afresh.
    usage.held('tasks', 1);
    expect(usage.highest('tasks')).toBe(1);
  });
});
