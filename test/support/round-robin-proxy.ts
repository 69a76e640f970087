import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  /** The MCP endpoint through the proxy. */
  url: string;
  /** Which target served each request, in order of the answers. */
  served: number[];
  close(): Promise<void>;
}

/** Names the target that served a response, so a test knows where a stream lives. */
export const BACKEND_HEADER = 'x-backend';

/**
 * A plain load balancer with no affinity: request n goes to target n mod N, whatever its
 * session. Streams (SSE) pass through as they come. Like a load balancer whose health check
 * has noticed, it skips a target that refuses connections (one that died) and tries the next;
 * a response cut off by a dying target is cut off for the client too.
 */
export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served: number[] = [];

  const forward = (res: ServerResponse, req: IncomingMessage, body: Buffer, index: number, tries: number): void => {
    const target = new URL(targets[index] as string);
    // A fresh connection per request: a kept-alive one to a dead target would fail as a reset, not a refusal.
    const upstream = request(
      { agent: false, hostname: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        served.push(index);
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [BACKEND_HEADER]: String(index) });
        answer.pipe(res);
        answer.once('close', () => {
          if (!answer.complete) res.destroy();
        });
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && !res.headersSent && tries + 1 < targets.length) {
        forward(res, req, body, (index + 1) % targets.length, tries + 1);
      } else if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${error.code ?? error.message}`);
      } else {
        res.destroy();
      }
    });
    res.once('close', () => upstream.destroy());
    upstream.end(body);
  };

  const server: Server = createServer((req, res) => {
    const index = next++ % targets.length;
    // Buffered so that a refused request can be sent again to the next target.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(res, req, Buffer.concat(chunks), index, 0));
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
