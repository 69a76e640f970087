import { describe, expect, it } from 'vitest';
import { backoffInterval, DEFAULT_POLL_INTERVAL_MS, nextPollDelay, withJitter } from '../../packages/client/src/poll-schedule.js';

describe('backoffInterval', () => {
  it('starts at the server floor and grows ×1.5 per unchanged poll up to the cap', () => {
    expect([0, 1, 2, 3, 4].map((n) => backoffInterval(1_000, n, 4_000))).toEqual([1_000, 1_500, 2_250, 3_375, 4_000]);
    expect(backoffInterval(1_000, 50, 4_000)).toBe(4_000);
  });

  it('never goes below the floor, even with a cap under it', () => {
    expect(backoffInterval(5_000, 3, 1_000)).toBe(5_000);
  });

  it('uses a default when the server suggests no interval', () => {
    expect(backoffInterval(undefined, 0, 30_000)).toBe(DEFAULT_POLL_INTERVAL_MS);
    expect(backoffInterval(0, 0, 30_000)).toBe(DEFAULT_POLL_INTERVAL_MS);
  });
});

describe('withJitter', () => {
  it('adds between 10 % and 20 %', () => {
    expect(withJitter(1_000, () => 0)).toBe(1_100);
    expect(withJitter(1_000, () => 0.5)).toBe(1_150);
    expect(withJitter(1_000, () => 0.999_999)).toBe(1_200);
  });

  it('stays within the band for any random source, including out-of-range ones', () => {
    for (const r of [-1, 0, 0.3, 0.7, 1, 2]) {
      const ms = withJitter(2_000, () => r);
      expect(ms).toBeGreaterThanOrEqual(2_200);
      expect(ms).toBeLessThanOrEqual(2_400);
    }
    const samples = Array.from({ length: 2_000 }, () => withJitter(200));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(220);
    expect(Math.max(...samples)).toBeLessThanOrEqual(240);
    // Spread, not a constant: many clients do not poll in lockstep.
    expect(new Set(samples).size).toBeGreaterThan(10);
  });
});

describe('nextPollDelay', () => {
  it('resets to the floor when the unchanged count is back to zero', () => {
    const mid = () => 0.5;
    expect(nextPollDelay({ pollIntervalMs: 200, unchangedPolls: 3, pushActive: false }, 30_000, mid)).toBe(Math.round(200 * 1.5 ** 3 * 1.15));
    expect(nextPollDelay({ pollIntervalMs: 200, unchangedPolls: 0, pushActive: false }, 30_000, mid)).toBe(230);
  });

  it('polls only at the cap while a listen stream delivers changes', () => {
    expect(nextPollDelay({ pollIntervalMs: 200, unchangedPolls: 0, pushActive: true }, 30_000, () => 0)).toBe(33_000);
  });
});
