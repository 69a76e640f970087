import { setTimeout as sleep } from 'node:timers/promises';
import { reportProgress } from './progress.js';
import type { ToolExtra } from './tool.js';

const TICK_MS = 250;

/**
 * Stands in for real work: waits `totalMs` in ticks, reporting progress after each. An aborted
 * call (client cancel, session closed) rejects at once, so no timer outlives its request.
 */
export async function simulateWork(totalMs: number, label: string, extra: ToolExtra): Promise<void> {
  for (let doneMs = 0; doneMs < totalMs; ) {
    const tickMs = Math.min(TICK_MS, totalMs - doneMs);
    await sleep(tickMs, undefined, { signal: extra.signal });
    doneMs += tickMs;
    await reportProgress(extra, {
      progress: doneMs,
      total: totalMs,
      message: `${label}: ${Math.round((doneMs / totalMs) * 100)}%`,
    });
  }
}
