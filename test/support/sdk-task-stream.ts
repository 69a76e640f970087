import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

/** One message of the official SDK client's `callToolStream`. */
export type StreamMessage = { type: string; task?: { taskId: string; status: string }; result?: unknown; error?: { message?: string } };

/** A task-augmented call through the SDK's `callToolStream`, read to its end. */
export async function streamToolTask(client: Client, name: string, args: Record<string, unknown>, ttl = 60_000): Promise<StreamMessage[]> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl } }) as AsyncGenerator<StreamMessage>;
  const seen: StreamMessage[] = [];
  for await (const message of stream) seen.push(message);
  return seen;
}
