import { createDemoMcpServer, type CallCounter } from './mcp-server.js';
import { startSessionServer } from './session-server.js';
import { DEMO_TOOLS } from './tools/index.js';

const DEMO_UPSTREAM_PATH = '/mcp';

export interface DemoUpstream {
  url: string;
  /** Tool calls still running in any session (a cancelled call must drop out promptly). */
  activeToolCalls(): number;
  close(): Promise<void>;
}

/** A 2025-11-25 Streamable HTTP MCP server with sessions, serving the demo tools. */
export async function startDemoUpstream(opts: { port?: number; host?: string } = {}): Promise<DemoUpstream> {
  const calls: CallCounter = { active: 0 };
  const server = await startSessionServer({ ...opts, path: DEMO_UPSTREAM_PATH, newServer: () => createDemoMcpServer(DEMO_TOOLS, calls) });
  return { url: server.url, activeToolCalls: () => calls.active, close: () => server.close() };
}
