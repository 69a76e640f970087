/**
 * When to poll next (pure, so it can be tested without a server). The server's
 * `pollIntervalMs` is a floor; repeated unchanged `working` polls back off ×1.5 up to a cap;
 * every delay gets 10–20 % random jitter on top, so many clients do not poll in lockstep.
 */

/** Used when the server suggests no interval. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_MAX_POLL_INTERVAL_MS = 30_000;
export const BACKOFF_FACTOR = 1.5;
export const JITTER_MIN = 0.1;
export const JITTER_MAX = 0.2;

/**
 * The interval before jitter: the floor times 1.5 per unchanged poll, capped at `maxMs`.
 * The server's floor wins over a cap set below it.
 */
export function backoffInterval(floorMs: number | undefined, unchangedPolls: number, maxMs: number): number {
  const floor = floorMs !== undefined && floorMs > 0 ? floorMs : DEFAULT_POLL_INTERVAL_MS;
  const grown = floor * BACKOFF_FACTOR ** Math.max(0, unchangedPolls);
  return Math.max(floor, Math.min(grown, maxMs));
}

/** Adds 10 % to 20 % (`random` in [0, 1)). The result is never below `ms`. */
export function withJitter(ms: number, random: () => number = Math.random): number {
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(ms * (1 + JITTER_MIN + (JITTER_MAX - JITTER_MIN) * r));
}

export interface PollState {
  /** The task's latest `pollIntervalMs`. */
  pollIntervalMs: number | undefined;
  /** Consecutive polls that found the task `working` and unchanged. */
  unchangedPolls: number;
  /** A listen stream is delivering changes: polling is only the fallback, at the cap. */
  pushActive: boolean;
}

export function nextPollDelay(state: PollState, maxMs: number, random: () => number = Math.random): number {
  const interval = state.pushActive
    ? backoffInterval(state.pollIntervalMs, Number.POSITIVE_INFINITY, maxMs)
    : backoffInterval(state.pollIntervalMs, state.unchangedPolls, maxMs);
  return withJitter(interval, random);
}
