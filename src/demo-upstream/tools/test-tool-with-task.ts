import { acceptedString, elicitForm } from '../elicit.js';
import { defineTool, textResult, toolError } from '../tool.js';
import { simulateWork } from '../work.js';

const WORK_MS = 2000;

export const testToolWithTask = defineTool({
  name: 'test_tool_with_task',
  description: 'Asks for a user name, works for about two seconds, then reports completion.',
  inputSchema: {},
  handler: async (_args, ctx) => {
    // `user_name` is not required by the schema because the official conformance suite answers
    // `{name}`; the tool takes that as the user name too.
    const answer = await elicitForm(ctx, 'Who is this task for?', {
      type: 'object',
      properties: { user_name: { type: 'string', title: 'User name' } },
    });
    const userName = acceptedString(answer, 'user_name') ?? acceptedString(answer, 'name');
    if (userName === undefined) return toolError(`No user name given (the user chose ${answer.action})`);
    await simulateWork(WORK_MS, `Working for ${userName}`, ctx.extra);
    return textResult(`Task completed for ${userName}`);
  },
});
