import type { TaskStatus } from '../core/task.js';

/** The statuses of an upstream task, 2025-11-25 or SEP-2663 (the same five words as the canonical ones). */
export const UPSTREAM_TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type UpstreamTaskStatus = (typeof UPSTREAM_TASK_STATUSES)[number];

/**
 * What the record of a task backed by an upstream task (docs/architecture.md, "Native execution"
 * and "SEP-2663 execution") becomes when its upstream task reports a status. `live`: the record
 * stays working or input_required (input_required follows the input requests the shim holds).
 */
export interface UpstreamStatusRow {
  record: 'live' | Extract<TaskStatus, 'completed' | 'failed' | 'cancelled'>;
  /** What the mirror of a 2025-11-25 task does, for docs/mapping.md. */
  note: string;
  /** What the mirror of a SEP-2663 task (`tasks/get`) does, for docs/mapping.md. */
  sep2663: string;
}

export const UPSTREAM_STATUS_TABLE: Readonly<Record<UpstreamTaskStatus, UpstreamStatusRow>> = {
  working: {
    record: 'live',
    note: 'its `statusMessage` is mirrored',
    sep2663: 'its `statusMessage` is mirrored; input requests the upstream no longer lists are withdrawn',
  },
  input_required: {
    record: 'live',
    note: 'the record turns `input_required` when the side-channel request itself arrives (tasks/result or GET stream)',
    sep2663: "each of its `inputRequests` becomes one of the record's (the key carries the upstream's key); each answer goes back in a `tasks/update`",
  },
  completed: {
    record: 'completed',
    note: 'the result from `tasks/result`, as it is; `isError: true` stays `completed` (2025-11-25 clients read `failed`)',
    sep2663: 'the inlined `result`, without its `resultType`; `isError: true` stays `completed`',
  },
  failed: {
    record: 'failed',
    note: 'error `-32603`, its message the upstream\'s `statusMessage`, else the text of the result `tasks/result` gives',
    sep2663: "the upstream's `error` as it is; `statusMessage` names the upstream and its reason",
  },
  cancelled: {
    record: 'cancelled',
    note: 'after a cancel through the shim: the upstream confirmed it; else `statusMessage` says the upstream cancelled it',
    sep2663: 'the same',
  },
};

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
