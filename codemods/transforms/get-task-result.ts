import { callsNamed } from '../raw.js';
import { isResultUnused, matchExperimentalCall, matchRawRequest } from '../mcp-calls.js';
import { sdkResultType } from './callbacks.js';
import { isMcpOnlyMethod, taskIdParam, tasksClientAt, RAW_REQUEST } from './shared.js';
import { mapRequestOptions, optionProperties, optionsArgument } from '../request-options.js';
import type { Transform } from './types.js';

/** The only calls this transform looks at (the rest of the file is never wrapped). */
const CALLS: ReadonlySet<string> = new Set(['getTaskResult', 'request']);

export const getTaskResult: Transform = {
  name: 'get-task-result',
  description: 'client.experimental.tasks.getTaskResult(id, schema) and raw tasks/result → tasksClient.waitForTask(id) (drives the task, answers input, returns the result)',
  triggers: ['getTaskResult', 'tasks/result', RAW_REQUEST],
  phase: 1,
  run(ctx) {
    for (const call of callsNamed(ctx.sourceFile, CALLS)) {
      if (!ctx.isFree(call.getStart(), call.getEnd())) continue;
      const exp = matchExperimentalCall(call);
      let id;
      let options;
      let receiver;
      let mcpOnly = true;
      if (exp?.method === 'getTaskResult') {
        [id, , options] = call.getArguments();
        receiver = exp.receiver;
      } else {
        const raw = matchRawRequest(call, ctx.mcp.methodValues);
        if (!raw || raw.method !== 'tasks/result') continue;
        id = taskIdParam(raw.params);
        options = raw.options;
        receiver = raw.receiver;
        mcpOnly = isMcpOnlyMethod(raw.method);
      }
      if (!id) continue;
      const schema = exp?.method === 'getTaskResult' ? call.getArguments()[1] : undefined;
      const mapped = mapRequestOptions(options);
      const tc = tasksClientAt(ctx, receiver, call, { mcpOnly });
      if (!tc) continue;
      const props = optionProperties(mapped);
      const optionsArg = optionsArgument(ctx, mapped, props.length ? `{ ${props.join(', ')} }` : undefined);
      // TypeScript: keep the SDK's result type the old call had, so the code that reads it still checks.
      const waited = `${tc}.waitForTask(${id.getText()}${optionsArg ? `, ${optionsArg}` : ''})`;
      const text = ctx.isTypeScript && exp && !isResultUnused(call) ? `(${waited} as Promise<${sdkResultType(ctx, schema)}>)` : waited;
      if (ctx.replaceNode(call, text)) ctx.rewrote(call);
    }
  },
};
