import { parseArgs } from 'node:util';
import { closeOnSignal } from '../demo-upstream/session-server.js';
import { startNativeUpstream } from './server.js';

/** `tsx src/demo-native-upstream/main.ts [--port N] [--max-ttl-ms N] [--poll-interval-ms N] [--quiet]` */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { port: { type: 'string' }, 'max-ttl-ms': { type: 'string' }, 'poll-interval-ms': { type: 'string' }, quiet: { type: 'boolean' } },
  });
  const number = (name: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined;
    if (!/^\d+$/.test(raw)) throw new Error(`--${name}: expected a whole number, got "${raw}"`);
    return Number(raw);
  };
  const upstream = await startNativeUpstream({
    port: number('port', values.port) ?? 0,
    maxTtlMs: number('max-ttl-ms', values['max-ttl-ms']),
    pollIntervalMs: number('poll-interval-ms', values['poll-interval-ms']),
    quiet: values.quiet,
  });
  console.log(`demo native upstream listening on ${upstream.url}`);
  closeOnSignal(upstream);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
