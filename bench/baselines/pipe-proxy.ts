/**
 * The minimal node:http pipe proxy: keep-alive agent, no parsing; the practical limit of one
 * extra Node hop in front of an upstream.
 * Usage: node --import tsx bench/baselines/pipe-proxy.ts --upstream URL [--no-keepalive]
 * --no-keepalive: a new upstream connection per request (what http-proxy does without an agent),
 * to measure what upstream keep-alive is worth.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const upstream = new URL(process.argv[process.argv.indexOf('--upstream') + 1]!);
const agent = process.argv.includes('--no-keepalive') ? false : new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const out = request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host }, agent },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  out.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(out);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`pipe-proxy listening on http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
