import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDemoClient, textOf } from '../support/demo-upstream-client.js';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';

let running: DemoUpstreamProcess | undefined;

afterEach(() => {
  running?.killGroup();
  running = undefined;
});

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('demo upstream entry (tsx src/demo-upstream/main.ts)', () => {
  it('serves MCP at the URL it prints and exits cleanly on SIGTERM', async () => {
    running = await spawnDemoUpstream();
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const client = await connectDemoClient(running.url);
    const result = await client.callTool({ name: 'greet', arguments: { name: 'spawned' } });
    expect(textOf(result)).toBe('Hello, spawned!');

    // A live session (with its GET stream) must not hold the shutdown.
    running.child.kill('SIGTERM');
    await expect(running.exited).resolves.toEqual({ code: 0, signal: null });
    await expect(fetch(running.url, { method: 'POST' })).rejects.toThrow();
    await client.close();
  });

  it('listens on the port given by --port', async () => {
    const port = await freePort();
    running = await spawnDemoUpstream(['--port', String(port)]);
    expect(running.url).toBe(`http://127.0.0.1:${port}/mcp`);
  });

  it('listens on DEMO_UPSTREAM_PORT and exits cleanly on SIGINT', async () => {
    const port = await freePort();
    running = await spawnDemoUpstream([], { DEMO_UPSTREAM_PORT: String(port) });
    expect(running.url).toBe(`http://127.0.0.1:${port}/mcp`);
    running.child.kill('SIGINT');
    await expect(running.exited).resolves.toEqual({ code: 0, signal: null });
  });
});
