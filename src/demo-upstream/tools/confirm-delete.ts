import { z } from 'zod';
import { elicitForm } from '../elicit.js';
import { defineTool, textResult } from '../tool.js';

export const confirmDelete = defineTool({
  name: 'confirm_delete',
  description: 'Asks the user to confirm, then deletes the file (or keeps it).',
  inputSchema: { filename: z.string().describe('File to delete') },
  handler: async ({ filename }, ctx) => {
    const answer = await elicitForm(ctx, `Delete ${filename}?`, {
      type: 'object',
      properties: { confirm: { type: 'boolean', title: 'Confirm' } },
      required: ['confirm'],
    });
    const confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
    return textResult(confirmed ? `Deleted ${filename}` : `Kept ${filename}`);
  },
});
