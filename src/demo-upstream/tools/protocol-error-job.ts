import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { defineTool } from '../tool.js';

export const protocolErrorJob = defineTool({
  name: 'protocol_error_job',
  description: 'Fails with a JSON-RPC error (-32603) instead of a tool result.',
  inputSchema: {},
  handler: async () => {
    // Reaches the client as a JSON-RPC error because the tools/call dispatcher rethrows McpError.
    throw new McpError(ErrorCode.InternalError, 'Simulated protocol error', { reason: 'simulated' });
  },
});
