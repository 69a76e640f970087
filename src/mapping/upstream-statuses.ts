import type { TaskStatus } from '../core/task.js';

/** The statuses of a 2025-11-25 upstream task (the same five words as the canonical ones). */
export const UPSTREAM_TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type UpstreamTaskStatus = (typeof UPSTREAM_TASK_STATUSES)[number];

/**
 * What the record of a natively executed task (docs/architecture.md, "Native execution") becomes
 * when its upstream task reports a status. `live`: the record stays working or input_required
 * (input_required follows the side-channel requests the shim holds, not the upstream's word).
 */
export interface UpstreamStatusRow {
  record: 'live' | Extract<TaskStatus, 'completed' | 'failed' | 'cancelled'>;
  /** What the mirror does, for docs/mapping.md. */
  note: string;
}

export const UPSTREAM_STATUS_TABLE: Readonly<Record<UpstreamTaskStatus, UpstreamStatusRow>> = {
  working: { record: 'live', note: 'its `statusMessage` is mirrored' },
  input_required: {
    record: 'live',
    note: 'the record turns `input_required` when the side-channel request itself arrives (tasks/result or GET stream)',
  },
  completed: {
    record: 'completed',
    note: 'the result from `tasks/result`, as it is; `isError: true` stays `completed` (2025-11-25 clients read `failed`)',
  },
  failed: {
    record: 'failed',
    note: 'error `-32603`, its message the upstream\'s `statusMessage`, else the text of the result `tasks/result` gives',
  },
  cancelled: {
    record: 'cancelled',
    note: 'after a cancel through the shim: the upstream confirmed it; else `statusMessage` says the upstream cancelled it',
  },
};

export function isUpstreamTaskStatus(value: unknown): value is UpstreamTaskStatus {
  return typeof value === 'string' && (UPSTREAM_TASK_STATUSES as readonly string[]).includes(value);
}

/**
 * How long the cancel of a task that an upstream task backs waits for the upstream's answer
 * (docs/decisions/0024-cancel-awaits-the-upstream.md). The mirror forwards the cancel for this
 * long; past it (and a settling margin) the record ends `cancelled` without the upstream's word.
 */
export const UPSTREAM_CANCEL_GRACE_MS = 5_000;

/**
 * The statusMessages of a cancel that an upstream task answers (docs/decisions/0024): the record
 * stays live, `awaiting`, until the upstream confirms (`confirmed`) or the grace passes
 * (`unconfirmed`); an upstream task that ended otherwise first gives the record that outcome.
 */
export const UPSTREAM_CANCEL_MESSAGES = {
  awaiting: 'Cancel requested; waiting for the upstream to confirm.',
  confirmed: 'Cancelled by the client; the upstream confirmed.',
  unconfirmed: (graceMs: number, answer?: string): string =>
    `Cancelled by the client; the upstream did not confirm within ${graceMs} ms${answer ? ` (it answered: ${answer})` : ''}.`,
};
