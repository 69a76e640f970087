import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import type { ShimConfig } from '../config/schema.js';
import { drainServer } from '../http/drain-server.js';
import { createHttpServer } from '../http/server.js';

export const MCP_PATH = '/mcp';

export interface HttpPartOptions {
  config: ShimConfig;
  /** POST /mcp and friends; absent on a replica that runs jobs only (role worker). */
  mcp?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** `/metrics` and the dashboard: all of them with `mcp`, else `/metrics` only (a worker's figures are its jobs). */
  routes: Router;
  readiness: Record<string, () => Promise<boolean>>;
  onError: (err: unknown) => void;
}

/** The replica's listener: /mcp (or the worker's 404), health, metrics and dashboard. */
export interface HttpPart {
  server: Server;
  /** The MCP endpoint, or a worker's server root. */
  url: string;
  /** /readyz answers 503 from now on, while everything is still served (the pre-stop delay). */
  markNotReady(): void;
  /** Every answer closes its connection from now on, so that clients reconnect elsewhere. */
  markDraining(): void;
  /** Stops accepting; requests in flight get until `deadline` (epoch ms), then their connections are cut. */
  close(deadline: number): Promise<void>;
}

/** A `worker` replica answers MCP requests with a 404 that says where they belong. */
async function notServedHere(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: 'this replica runs task jobs only (role worker); send MCP requests to an api or all replica' }));
}

export async function listen(options: HttpPartOptions): Promise<HttpPart> {
  const { config, mcp, routes } = options;
  // `notReady`: /readyz answers 503 (the pre-stop delay and after); `draining`: the graceful stop has begun.
  let notReady = false;
  let draining = false;
  const { server, app } = createHttpServer(
    MCP_PATH,
    mcp ?? notServedHere,
    { readiness: options.readiness, notReady: () => notReady, draining: () => draining },
    options.onError,
    { headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, maxConnections: config.maxConnections },
  );
  if (mcp) app.use(routes);
  else app.get('/metrics', routes);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    server,
    url: `http://${host}:${port}${mcp ? MCP_PATH : '/'}`,
    markNotReady() {
      notReady = true;
    },
    markDraining() {
      draining = true;
    },
    close: (deadline) => drainServer(server, deadline),
  };
}
