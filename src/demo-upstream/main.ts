import { resolvePort } from './port.js';
import { startDemoUpstream } from './server.js';

async function main(): Promise<void> {
  const upstream = await startDemoUpstream({ port: resolvePort(process.argv.slice(2), process.env) });
  console.log(`demo upstream listening on ${upstream.url}`);
  const stop = (): void => {
    upstream.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
