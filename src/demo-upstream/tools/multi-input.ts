import { acceptedString, elicitForm } from '../elicit.js';
import { defineTool, textResult } from '../tool.js';

const DECLINED = '(declined)';

export const multiInput = defineTool({
  name: 'multi_input',
  description: 'Asks two questions at once (name and favourite colour) and combines the answers.',
  inputSchema: {},
  handler: async (_args, ctx) => {
    // Both questions are outstanding together: this is the case a shim must key inputRequests for.
    const [nameAnswer, colorAnswer] = await Promise.all([
      elicitForm(ctx, 'What is your name?', {
        type: 'object',
        properties: { name: { type: 'string', title: 'Name' } },
        required: ['name'],
      }),
      elicitForm(ctx, 'What is your favourite colour?', {
        type: 'object',
        properties: { color: { type: 'string', title: 'Colour' } },
        required: ['color'],
      }),
    ]);
    const name = acceptedString(nameAnswer, 'name') ?? DECLINED;
    const color = acceptedString(colorAnswer, 'color') ?? DECLINED;
    return textResult(`${name} likes ${color}`);
  },
});
