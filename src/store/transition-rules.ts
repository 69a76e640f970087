import { TASK_STATUSES, type TaskStatus } from '../core/task.js';
import { sourcesOf, TRANSITIONS } from '../mapping/transitions.js';

/**
 * Which statuses each store operation accepts, derived from the transition table so that both
 * stores (and the Redis Lua scripts, which receive these lists) enforce exactly that table.
 */

/** Statuses with a way out: a task in one of them may still change at all. */
export const LIVE_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter((status) => TRANSITIONS[status].length > 0);

/** A request moves the task to `input_required`, or adds to the requests it already waits on. */
export const REQUEST_INPUT_FROM: readonly TaskStatus[] = [...sourcesOf('input_required'), 'input_required'];

/** Settling the last outstanding request resumes the work from these statuses. */
export const RESUME_FROM: readonly TaskStatus[] = sourcesOf('working');

export const CANCEL_FROM: readonly TaskStatus[] = sourcesOf('cancelled');
