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
  cancelled: { record: 'cancelled', note: '`statusMessage` says the upstream cancelled it (a cancel through the shim ends the record first)' },
};
