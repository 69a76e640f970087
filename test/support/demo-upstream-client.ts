import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An official SDK client that can answer form elicitations, as old clients behind the shim do. */
export async function connectDemoClient(url: string): Promise<Client> {
  const client = new Client({ name: 'demo-upstream-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

export function textOf(result: unknown): string {
  const { content } = result as CallToolResult;
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}
