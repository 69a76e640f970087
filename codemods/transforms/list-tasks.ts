import { callsNamed } from '../raw.js';
import { METHOD_TABLE } from '../../src/mapping/methods.js';
import { matchExperimentalCall, matchRawRequest } from '../mcp-calls.js';
import { isMcpReceiver, RAW_REQUEST } from './shared.js';
import type { Transform } from './types.js';

/** Methods with no SEP-2663 replacement that are about listing. */
const LIST_METHODS = new Set(METHOD_TABLE.filter((row) => row.sep2663 === null && row.method.endsWith('/list')).map((row) => row.method));

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['listTasks', 'request']);

export const listTasks: Transform = {
  name: 'list-tasks',
  description: 'client.experimental.tasks.listTasks() and raw tasks/list: no SEP-2663 equivalent, marked (keep your own task ids)',
  triggers: ['listTasks', ...LIST_METHODS, RAW_REQUEST],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      const exp = matchExperimentalCall(call);
      if (exp?.method === 'listTasks') {
        if (isMcpReceiver(ctx, exp.receiver, { mcpOnly: true })) ctx.marker(call, 'tasks-list');
        continue;
      }
      const raw = matchRawRequest(call, ctx.mcp.methodValues);
      if (raw && LIST_METHODS.has(raw.method) && isMcpReceiver(ctx, raw.receiver, { mcpOnly: false })) ctx.marker(call, 'tasks-list');
    }
  },
};
