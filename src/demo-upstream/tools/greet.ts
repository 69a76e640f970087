import { z } from 'zod';
import { defineTool, textResult } from '../tool.js';

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name, immediately.',
  inputSchema: { name: z.string().describe('Who to greet') },
  handler: async ({ name }) => textResult(`Hello, ${name}!`),
});
