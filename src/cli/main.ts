import { ConfigError, loadConfig, type Loaded } from '../config/load.js';
import { redactUrl } from '../config/redact.js';
import type { ShimConfig } from '../config/schema.js';
import { DEMO_TOOL_POLICIES } from '../demo-upstream/policies.js';
import type { Shim } from '../shim.js';
import { handleReloads } from './reloads.js';
import { policyLines } from './policy-lines.js';
import { packageVersion } from './version.js';

const USAGE = `Usage:
  mcp-tasks-shim start [options]                 the shim + the demo upstream on one port (npm start)
  mcp-tasks-shim start --demo native [options]   the same with the demo upstream that runs tasks itself
  mcp-tasks-shim serve --upstream URL [options]  the shim in front of your MCP server
  mcp-tasks-shim codemod <path> [options]        migrate client code to SEP-2663 (codemod --help)

Options:
  --role R          all (default): serve /mcp and run task jobs; api: serve /mcp, queue jobs only;
                    worker: run task jobs only (no /mcp). api and worker need --redis (env SHIM_ROLE)
  --port N          listen port (default 8080, env PORT)
  --host H          listen address (default 127.0.0.1, env HOST)
  --upstream-protocol P  auto (default): ask the upstream; or pin 2025-11-25 | 2026-07-28 (env SHIM_UPSTREAM_PROTOCOL)
  --redis URL       Redis task store, shared by replicas (env REDIS_URL); default: embedded, one process
  --redis-cluster   --redis lists seed nodes (comma-separated) of a Redis Cluster (env SHIM_REDIS_CLUSTER)
  --config FILE     settings as a JSON object of configuration keys, under env and flags (env SHIM_CONFIG_FILE)
  --watch-config    reload when a configuration file changes, as on SIGHUP (env SHIM_WATCH_CONFIG=true)
  --log-level L     fatal | error | warn | info (default) | debug (adds tasks/get polls) | trace | silent: JSON lines
                    on stderr, pretty on a terminal (env SHIM_LOG_LEVEL)
  --log-arguments   request lines carry tool arguments, which may hold secrets (env SHIM_LOG_ARGUMENTS=true)
  --policy FILE     per-tool task policies, JSON (env SHIM_POLICY_FILE)
  --auth MODE       none | tokens | jwt (env SHIM_AUTH); default: from the key material given, else none
  --tokens FILE     bearer tokens → principals, JSON (env SHIM_TOKENS_FILE)
  --jwt-secret-file FILE  HS256 secret for JWT bearer tokens (env SHIM_JWT_SECRET_FILE, or SHIM_JWT_SECRET)
  --jwks FILE       RS256 public keys (JWKS) for JWT bearer tokens, chosen by kid (env SHIM_JWKS_FILE)
  --jwt-principal-claim C  the claim that names the principal (default sub, env SHIM_JWT_PRINCIPAL_CLAIM)
  --jwt-issuer I    required iss (env SHIM_JWT_ISSUER)
  --jwt-audience A  required aud (env SHIM_JWT_AUDIENCE)
  --upstream-headers-file FILE  headers the shim sends the upstream, JSON (env SHIM_UPSTREAM_HEADERS_FILE or SHIM_UPSTREAM_HEADERS)
  --deprecation T   Deprecation header on old-API responses: ISO date/time or @epoch (env SHIM_LEGACY_DEPRECATION)
  --sunset T        Sunset header on old-API responses: ISO date/time (env SHIM_LEGACY_SUNSET)
  --migration-guide URL  Link from those headers (env SHIM_MIGRATION_GUIDE_URL)
  --legacy M        old APIs: on (default) | drain (no new old-API tasks) | off (no old-API task requests;
                    HTTP 410, -32013); old tasks stay readable (env SHIM_LEGACY)
  --drain           the same as --legacy drain (env SHIM_LEGACY_DRAIN=true)
  --brownout S/E    old-API brownout window, ISO start/end; repeatable (env SHIM_LEGACY_BROWNOUTS, comma-separated)
  --dashboard-token T  bearer token for /dashboard and /metrics (env SHIM_DASHBOARD_TOKEN); default: loopback only
  --replica-id ID   this replica's name in /metrics (env SHIM_REPLICA_ID)
  --job-lock-ms N   a dead replica's tasks are failed or re-run within about 2 N ms (default 30000, env SHIM_JOB_LOCK_MS)
  --shutdown-delay-ms N  on SIGTERM, how long /readyz answers 503 while requests are still served, before the
                    graceful stop (default 5000, env SHIM_SHUTDOWN_DELAY_MS)
  --shutdown-grace-ms N  on SIGTERM, how long running tasks and requests may finish (default 25000, env SHIM_SHUTDOWN_GRACE_MS)
  --max-open-tasks N     open tasks per principal, fleet-wide; 0 = no limit (default 1000, env SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL)
  --max-open-streams N   open listen/GET/tasks/result streams per principal; 0 = no limit (default 1000, env SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL)
  --trust-proxy     believe the proxy in front: X-Forwarded-Proto makes the dashboard cookie Secure behind TLS, and the
                    client address is the last X-Forwarded-For entry (env SHIM_TRUST_PROXY=true)
  --headers-timeout-ms N  a request's headers must arrive within N ms (default 10000, env SHIM_HEADERS_TIMEOUT_MS)
  --request-timeout-ms N  a whole request must arrive within N ms; responses and streams are not bounded (default 30000, env SHIM_REQUEST_TIMEOUT_MS)
  --max-connections N     open connections per replica, more are closed at once; 0 = no limit (default 10000, env SHIM_MAX_CONNECTIONS)
  --anonymous-principal P  auth mode none: shared (every client is 'anonymous', default) or per-address (env SHIM_ANONYMOUS_PRINCIPAL)
  --max-sessions N       legacy sessions per principal, fleet-wide; 0 = no limit (default 1000, env SHIM_MAX_SESSIONS_PER_PRINCIPAL)
  --max-stream-buffer N  unsent bytes one SSE stream may hold before it is closed (default 4194304, env SHIM_MAX_STREAM_BUFFER_BYTES)
  --max-stream-buffer-total N  unsent SSE bytes per replica before new streams are refused (default 67108864, env SHIM_MAX_STREAM_BUFFER_TOTAL_BYTES)
  -h, --help        this text
  -v, --version     the installed version
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version' || command === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (command === 'codemod') return (await import('../../codemods/index.js')).runCodemodCli(rest);
  if (command !== 'start' && command !== 'serve') {
    process.stderr.write(`mcp-tasks-shim: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }

  let demoKind: DemoKind;
  try {
    demoKind = takeDemoFlag(command, rest);
  } catch (err) {
    process.stderr.write(`mcp-tasks-shim: ${(err as Error).message}\n`);
    return 2;
  }
  // Kept for reloads: SIGHUP reads the same flags and environment again, and the files anew.
  const load = (): Loaded =>
    loadConfig({
      argv: rest,
      env: process.env,
      // The native demo's tools say themselves how they run (taskSupport); the plain demo's need the table.
      base: command === 'start' && demoKind === 'plain' ? { policies: { tools: { ...DEMO_TOOL_POLICIES } } } : {},
    });
  let loaded: Loaded;
  let config: ShimConfig;
  try {
    loaded = load();
    if (loaded.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    config = loaded.config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mcp-tasks-shim: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (command === 'serve' && !config.upstreamUrl) {
    process.stderr.write('mcp-tasks-shim: serve needs --upstream URL (or UPSTREAM_URL): the MCP server to front\n');
    return 2;
  }

  // SIGHUP's default ends the process: from here on it asks for a reload, run once the shim is up.
  let reloadAsked = false;
  const hupWhileStarting = (): void => {
    reloadAsked = true;
  };
  process.on('SIGHUP', hupWhileStarting);

  // Loaded only now, so that usage and configuration errors answer at once.
  const { startShim } = await import('../shim.js');
  const { createLogger } = await import('../observe/logger.js');
  // JSON lines on stderr; stdout keeps the start-up lines (docs/operations.md, "Logs").
  const logger = createLogger({ level: config.logLevel, pretty: process.stderr.isTTY === true });
  const demo = command === 'start' && !config.upstreamUrl ? await startDemo(demoKind) : undefined;
  const upstreamUrl = config.upstreamUrl ?? (demo as { url: string }).url;
  let shim: Shim;
  try {
    shim = await startShim({ ...config, upstreamUrl }, { logger });
  } catch (err) {
    await demo?.close();
    process.stderr.write(`mcp-tasks-shim: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }

  // Reloads are taken from here on, before the start lines: a client may signal as soon as it reads "listening on".
  const reloads = handleReloads({ shim, load, started: loaded, write: (line) => process.stderr.write(`${line}\n`) });
  process.off('SIGHUP', hupWhileStarting);
  if (reloadAsked) reloads.request('SIGHUP during start');

  if (!config.redisUrl) {
    process.stderr.write(
      'WARNING: embedded task store: tasks live in this process only. They are not durable and not shared with other replicas. Set REDIS_URL (or --redis) for production.\n',
    );
  }
  process.stdout.write(`mcp-tasks-shim listening on ${shim.url}\n`);
  process.stdout.write(`  version:  ${packageVersion()}\n`);
  process.stdout.write(`  upstream: ${upstreamUrl}${demo ? (demoKind === 'native' ? ' (demo native upstream)' : ' (demo upstream)') : ''}\n`);
  if (config.role !== 'all') process.stdout.write(`  role:     ${config.role === 'api' ? 'api (serves /mcp; workers run its task jobs)' : 'worker (runs task jobs; no /mcp)'}\n`);
  process.stdout.write(`  store:    ${config.redisUrl ? `redis ${redactUrl(config.redisUrl)}${config.redisCluster ? ' (cluster)' : ''}` : 'embedded (single process)'}\n`);
  process.stdout.write(`  auth:     ${config.auth.mode}\n`);
  logger.info({ url: shim.url, version: packageVersion(), role: config.role, store: config.redisUrl ? 'redis' : 'embedded', auth: config.auth.mode }, 'listening');
  // A worker plans no calls: it says what the upstream speaks; the table is the replicas' that serve /mcp.
  announcePolicies(shim, config.role !== 'worker');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  reloads.stop();
  const graceMs = config.shutdownGraceMs;
  // SIGTERM is what an orchestrator sends while its balancer still routes here; Ctrl-C (SIGINT) needs no delay.
  const delayMs = signal === 'SIGTERM' ? config.shutdownDelayMs : 0;
  process.stderr.write(
    `mcp-tasks-shim: ${signal}: shutting down (${delayMs > 0 ? `/readyz 503 for ${delayMs} ms first, ` : ''}grace ${graceMs} ms; a second signal stops at once)\n`,
  );
  // A second signal, or a shutdown that overruns its bound, ends the process without waiting.
  const force = (why: string): void => {
    process.stderr.write(`mcp-tasks-shim: ${why}: stopping now\n`);
    process.exit(1);
  };
  process.once('SIGTERM', () => force('second signal'));
  process.once('SIGINT', () => force('second signal'));
  setTimeout(() => force(`shutdown still running ${SHUTDOWN_MARGIN_MS} ms after the grace period`), delayMs + graceMs + SHUTDOWN_MARGIN_MS).unref();
  await shim.shutdown({ graceMs, delayMs });
  await demo?.close();
  process.stderr.write('mcp-tasks-shim: stopped\n');
  return 0;
}

type DemoKind = 'plain' | 'native';

/** `start --demo plain|native` picks the demo upstream; removed from `argv` before the configuration reads it. */
function takeDemoFlag(command: string, argv: string[]): DemoKind {
  const at = argv.findIndex((arg) => arg === '--demo' || arg.startsWith('--demo='));
  if (at < 0) return 'plain';
  if (command !== 'start') throw new Error('--demo belongs to start (serve fronts your own --upstream)');
  const arg = argv[at] as string;
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[at + 1];
  argv.splice(at, arg.includes('=') ? 1 : 2);
  if (value !== 'plain' && value !== 'native') throw new Error(`--demo: expected plain or native, got ${value === undefined ? 'nothing' : `"${value}"`}`);
  return value;
}

async function startDemo(kind: DemoKind): Promise<{ url: string; close(): Promise<void> }> {
  if (kind === 'native') return (await import('../demo-native-upstream/server.js')).startNativeUpstream({ port: 0 });
  return (await import('../demo-upstream/server.js')).startDemoUpstream({ port: 0 });
}

/** What closing the stores and connections may take after the grace period. */
const SHUTDOWN_MARGIN_MS = 10_000;

/** How often the start-up lines ask again for the policy table of an upstream that did not answer. */
const POLICY_RETRY_MS = 2_000;

/**
 * Prints what the upstream speaks and every upstream tool's effective policy, execution mode and
 * policy source once the upstream answers (the dashboard's table). Start never waits for it: an
 * upstream that is down gets one line saying so, and the table follows when it answers.
 */
function announcePolicies(shim: Shim, withTable: boolean): void {
  let toldDown = false;
  const attempt = (): void => {
    shim.policies().then(
      (table) => {
        const { upstream, out, warnings } = policyLines(table);
        // An upstream that could not be learned has no tools listed: its line says why, the table waits for it.
        if (table.upstream?.problem) {
          if (!toldDown) process.stdout.write(`${[...upstream, `  policies: the upstream is not answering (${table.upstream.problem}); the table follows when it does`].join('\n')}\n`);
          toldDown = true;
          setTimeout(attempt, POLICY_RETRY_MS).unref();
          return;
        }
        if (toldDown) process.stdout.write('mcp-tasks-shim: the upstream answers now\n');
        process.stdout.write(`${[...upstream, ...(withTable ? out : [])].join('\n')}\n`);
        if (withTable) for (const warning of warnings) process.stderr.write(`${warning}\n`);
      },
      (err: unknown) => {
        if (!toldDown) {
          const why = err instanceof Error ? err.message : String(err);
          process.stdout.write(`  policies: the upstream is not answering (${why}); the table follows when it does\n`);
          toldDown = true;
        }
        setTimeout(attempt, POLICY_RETRY_MS).unref();
      },
    );
  };
  attempt();
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`mcp-tasks-shim: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
