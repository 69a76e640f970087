import { acceptedString, elicitForm } from '../elicit.js';
import { defineTool, textResult } from '../tool.js';

const DECLINED = '(declined)';
const NOT_GIVEN = '(not given)';

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
      // The colour is optional, so that an accepted answer without it (the official conformance
      // suite answers both questions with `{name, confirm}`) still completes the call.
      elicitForm(ctx, 'What is your favourite colour?', {
        type: 'object',
        properties: { color: { type: 'string', title: 'Colour' } },
      }),
    ]);
    const name = acceptedString(nameAnswer, 'name') ?? DECLINED;
    const color = colorAnswer.action === 'accept' ? (acceptedString(colorAnswer, 'color') ?? NOT_GIVEN) : DECLINED;
    return textResult(`${name} likes ${color}`);
  },
});
