import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  /** The MCP endpoint through the proxy. */
  url: string;
  /** Which target served each request, in order. */
  served: number[];
  close(): Promise<void>;
}

/**
 * A plain load balancer with no affinity: request n goes to target n mod N, whatever its
 * session. Streams (SSE) pass through as they come.
 */
export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served: number[] = [];
  const server: Server = createServer((req, res) => {
    const index = next++ % targets.length;
    served.push(index);
    const target = new URL(targets[index] as string);
    const upstream = request(
      { hostname: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
