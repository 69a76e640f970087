import type { TaskStatus } from '../core/task.js';

/**
 * How each canonical status reads on each wire. This table is the single source: adapters
 * render through it, the codemod rewrites old literals with it, and docs/mapping.md is
 * generated from it (and a test fails when the two drift).
 */
export interface StatusRow {
  /** SEP-2663 (2026-07-28): the canonical name itself. */
  sep2663: TaskStatus;
  /** MCP 2025-11-25. A `completed` task whose result has `isError: true` reads `failed` there. */
  mcp20251125: TaskStatus;
  mcp20251125WhenToolError?: TaskStatus;
  /** tasks/create dialect, before and after a worker picked the task up. */
  tasksCreate: { notStarted: DialectStatus; started: DialectStatus };
}

export const DIALECT_STATUSES = ['pending', 'running', 'done', 'error'] as const;
export type DialectStatus = (typeof DIALECT_STATUSES)[number];

export const STATUS_TABLE: Readonly<Record<TaskStatus, StatusRow>> = {
  working: {
    sep2663: 'working',
    mcp20251125: 'working',
    tasksCreate: { notStarted: 'pending', started: 'running' },
  },
  input_required: {
    sep2663: 'input_required',
    mcp20251125: 'input_required',
    tasksCreate: { notStarted: 'running', started: 'running' },
  },
  completed: {
    sep2663: 'completed',
    mcp20251125: 'completed',
    mcp20251125WhenToolError: 'failed',
    tasksCreate: { notStarted: 'done', started: 'done' },
  },
  failed: {
    sep2663: 'failed',
    mcp20251125: 'failed',
    tasksCreate: { notStarted: 'error', started: 'error' },
  },
  cancelled: {
    sep2663: 'cancelled',
    mcp20251125: 'cancelled',
    tasksCreate: { notStarted: 'error', started: 'error' },
  },
};

/**
 * What a client written for an old wire compares against, and the SEP-2663 status(es) it
 * becomes. The codemod reads this to rewrite literals; it is derived from STATUS_TABLE's
 * meaning, written out because one old word can cover several new ones.
 */
export const LEGACY_STATUS_TO_SEP2663: Readonly<Record<DialectStatus, readonly TaskStatus[]>> = {
  pending: ['working'],
  running: ['working', 'input_required'],
  done: ['completed'],
  error: ['failed', 'cancelled'],
};

/** The dialect renders a cancelled task as this error, so the mapping loses nothing. */
export const CANCELLED_AS_ERROR = {
  code: -32800,
  message: 'Task cancelled',
  data: { status: 'cancelled' },
} as const;
