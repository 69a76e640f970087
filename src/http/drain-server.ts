import type { Server } from 'node:http';

const IDLE_SWEEP_MS = 200;

/**
 * Stops accepting connections and waits, until `deadline` (epoch ms), for the open ones to
 * end; then cuts whatever is left. Connections that fall idle are closed as they do, since a
 * keep-alive socket would otherwise hold the server open until its timeout.
 */
export async function drainServer(server: Server, deadline: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  clearInterval(sweep);
  server.closeAllConnections();
  await closed;
}
