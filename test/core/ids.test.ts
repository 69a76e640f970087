import { describe, expect, it } from 'vitest';
import { newTaskId, TASK_ID_PATTERN } from '../../src/core/ids.js';

describe('task ids', () => {
  it('are 22 base64url characters (128 bits), across many refills of the entropy pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newTaskId());
    expect(ids.filter((id) => !TASK_ID_PATTERN.test(id))).toEqual([]);
  });

  it('never repeat: every pooled byte is used once', () => {
    const ids = Array.from({ length: 20_000 }, () => newTaskId());
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carry no structure: each of the 16 bytes is spread over its whole range', () => {
    const counts = Array.from({ length: 16 }, () => new Set<number>());
    for (let i = 0; i < 6_000; i++) {
      const bytes = Buffer.from(newTaskId(), 'base64url');
      expect(bytes.length).toBe(16);
      bytes.forEach((b, n) => counts[n]!.add(b));
    }
    // 6,000 draws of a uniform byte miss a value with probability e^-23; over 4,096 (byte, value) pairs, ~3e-7.
    expect(counts.map((seen) => seen.size)).toEqual(Array(16).fill(256));
  });
});
