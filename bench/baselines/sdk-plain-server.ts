/**
 * The upstream of the quick-call scenario: what most MCP servers in the field are — the official
 * SDK's McpServer with one plain tool registered by `registerTool` (no tasks), served over
 * stateful Streamable HTTP with the SDK's defaults (answers as SSE), one McpServer per session.
 * `echo` answers at once.
 * Usage: node --import tsx bench/baselines/sdk-plain-server.ts
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { serveSdkSessions } from './sdk-sessions.js';

serveSdkSessions(
  'sdk-plain-server',
  () => {
    const server = new McpServer({ name: 'sdk-plain-baseline', version: '1.0.0' });
    server.registerTool('echo', { description: 'Answers at once with its text', inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    return server;
  },
  { enableJsonResponse: false },
);
