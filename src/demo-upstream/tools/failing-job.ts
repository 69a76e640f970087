import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, toolError } from '../tool.js';

export const failingJob = defineTool({
  name: 'failing_job',
  description: 'Runs for about a second, then fails with a tool execution error (isError).',
  inputSchema: {},
  handler: async (_args, { extra }) => {
    await sleep(1000, undefined, { signal: extra.signal });
    return toolError('Job failed: simulated failure');
  },
});
