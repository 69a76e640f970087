import { resolvePort } from './port.js';
import { startDemoUpstream } from './server.js';
import { closeOnSignal } from './session-server.js';

async function main(): Promise<void> {
  const upstream = await startDemoUpstream({ port: resolvePort(process.argv.slice(2), process.env) });
  console.log(`demo upstream listening on ${upstream.url}`);
  closeOnSignal(upstream);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
