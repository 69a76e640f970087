import { z } from 'zod';
import { defineTool, textResult } from '../tool.js';
import { simulateWork } from '../work.js';

export const slowCompute = defineTool({
  name: 'slow_compute',
  description: 'Computes for the given number of seconds, reporting progress, then returns.',
  inputSchema: {
    seconds: z.number().min(0).describe('How long the computation takes'),
    label: z.string().optional().describe('Name of the computed value'),
  },
  handler: async ({ seconds, label = 'result' }, { extra }) => {
    await simulateWork(seconds * 1000, `Computing ${label}`, extra);
    return textResult(`Computed ${label} after ${seconds}s`);
  },
});
