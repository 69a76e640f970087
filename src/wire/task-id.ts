import { z } from 'zod';
import { MAX_TASK_ID_LENGTH, TASK_ID_TOO_LONG } from '../core/limits.js';

/** A `taskId` param on every wire: refused before any store access when it cannot be an id. */
export const TaskIdString = z.string().min(1).max(MAX_TASK_ID_LENGTH, TASK_ID_TOO_LONG);

/** Params that name one task, on every wire; other fields are ignored. */
export const TaskIdParams = z.looseObject({ taskId: TaskIdString });
