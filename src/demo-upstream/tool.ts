import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ToolContext {
  extra: ToolExtra;
  /** The session's low-level server: tools that elicit need it. */
  server: Server;
}

/** A demo tool with its argument type erased, so that tools of every shape sit in one list. */
export interface DemoTool {
  name: string;
  description: string;
  inputSchema: z.ZodObject;
  call(args: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

export function defineTool<Shape extends z.ZodRawShape>(def: {
  name: string;
  description: string;
  inputSchema: Shape;
  handler: (args: z.infer<z.ZodObject<Shape>>, ctx: ToolContext) => Promise<CallToolResult>;
}): DemoTool {
  const schema = z.object(def.inputSchema);
  return {
    name: def.name,
    description: def.description,
    inputSchema: schema,
    async call(args, ctx) {
      const parsed = schema.safeParse(args ?? {});
      // Bad arguments are a tool execution error in 2025-11-25, so the model can correct itself.
      if (!parsed.success) return toolError(`Invalid arguments for ${def.name}: ${z.prettifyError(parsed.error)}`);
      return def.handler(parsed.data, ctx);
    },
  };
}

export function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

export function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
