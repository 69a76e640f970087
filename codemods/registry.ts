import { callToolStream } from './transforms/call-tool-stream.js';
import { callToolTask } from './transforms/call-tool-task.js';
import { cancelTask } from './transforms/cancel-task.js';
import { dialectPollLoop } from './transforms/dialect-poll-loop.js';
import { customTransport } from './transforms/custom-transport.js';
import { clientTaskHost } from './transforms/client-task-host.js';
import { leftoverSites } from './transforms/leftover-sites.js';
import { elicitationHandler } from './transforms/elicitation-handler.js';
import { errorChecks } from './transforms/error-checks.js';
import { clientUsage, importCleanup } from './transforms/finishing.js';
import { taskAugmentedCall } from './transforms/task-augmented-call.js';
import { taskFields } from './transforms/task-fields.js';
import { taskStatusNotifications } from './transforms/task-status-notifications.js';
import { taskStatuses } from './transforms/task-statuses.js';
import { getTaskResult } from './transforms/get-task-result.js';
import { getTask } from './transforms/get-task.js';
import { listTasks } from './transforms/list-tasks.js';
import type { Transform } from './transforms/types.js';

/** Every transform, in the order they run on a file (later ones see the output of earlier ones). */
export const TRANSFORMS: readonly Transform[] = [
  dialectPollLoop,
  callToolStream,
  callToolTask,
  getTaskResult,
  getTask,
  cancelTask,
  listTasks,
  taskAugmentedCall,
  taskStatusNotifications,
  elicitationHandler,
  taskFields,
  taskStatuses,
  customTransport,
  clientTaskHost,
  leftoverSites,
];

/** Run after the transforms on a file that changed; not selectable. */
export const FINISHING: readonly Transform[] = [clientUsage, errorChecks, importCleanup];

export class UnknownTransformError extends Error {
  constructor(readonly names: string[]) {
    super(`unknown transform${names.length === 1 ? '' : 's'}: ${names.join(', ')} (see --list)`);
    this.name = 'UnknownTransformError';
  }
}

/** The named transforms in registry order; all of them when `names` is absent. */
export function selectTransforms(names: readonly string[] | undefined): Transform[] {
  if (!names || names.length === 0) return [...TRANSFORMS];
  const unknown = names.filter((n) => !TRANSFORMS.some((t) => t.name === n));
  if (unknown.length > 0) throw new UnknownTransformError(unknown);
  return TRANSFORMS.filter((t) => names.includes(t.name));
}
