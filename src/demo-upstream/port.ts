import { parseArgs } from 'node:util';

/** `--port N` wins over DEMO_UPSTREAM_PORT; neither means any free port (the URL is printed). */
export function resolvePort(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  const { values } = parseArgs({ args: [...argv], options: { port: { type: 'string' } } });
  const raw = values.port ?? env['DEMO_UPSTREAM_PORT'] ?? '0';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65_535) throw new Error(`Invalid port: ${raw}`);
  return port;
}
