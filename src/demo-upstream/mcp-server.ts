import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { toolError, type DemoTool } from './tool.js';

/** Tool calls in flight across every session: lets tests prove that a cancelled call really stopped. */
export interface CallCounter {
  active: number;
}

/** One McpServer per session, as the SDK's Streamable HTTP transport expects. */
export function createDemoMcpServer(tools: readonly DemoTool[], calls: CallCounter): McpServer {
  const mcp = new McpServer({ name: 'demo-upstream', version: '1.0.0' });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  // McpServer keeps the registry and renders tools/list (JSON Schema from the zod shapes); the
  // callbacks stay truthful, but calls reach the tools through the dispatcher below.
  for (const tool of tools) {
    mcp.registerTool(tool.name, { description: tool.description, inputSchema: tool.inputSchema }, (args, extra) =>
      tool.call(args, { extra, server: mcp.server }),
    );
  }

  // McpServer's own tools/call turns every thrown error, McpError included, into an isError
  // result. protocol_error_job must reach the client as a JSON-RPC error, so calls are
  // dispatched here: McpError is a protocol error, anything else a tool execution error.
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    calls.active++;
    try {
      return await tool.call(request.params.arguments, { extra, server: mcp.server });
    } catch (error) {
      if (error instanceof McpError) throw error;
      return toolError(error instanceof Error ? error.message : String(error));
    } finally {
      calls.active--;
    }
  });

  return mcp;
}
