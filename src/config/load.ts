import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { AUTH_FLAGS, resolveAuth } from './auth-settings.js';
import { ConfigFileSchema, ConfigSchema, DEFAULT_CONFIG, PolicyFileSchema, TokensFileSchema, type PolicyFile, type ShimConfig } from './schema.js';
import { resolveUpstreamHeaders, UPSTREAM_HEADER_FLAGS } from './upstream-headers.js';

/** Every problem found in the configuration, each on its own line, so one start shows them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Environment variable → config key. Flags override these; both override the defaults. */
const ENV_KEYS: ReadonlyArray<[string, keyof ShimConfig, Kind]> = [
  ['SHIM_ROLE', 'role', 'string'],
  ['PORT', 'port', 'int'],
  ['HOST', 'host', 'string'],
  ['UPSTREAM_URL', 'upstreamUrl', 'string'],
  ['SHIM_UPSTREAM_PROTOCOL', 'upstreamProtocol', 'string'],
  ['REDIS_URL', 'redisUrl', 'string'],
  ['SHIM_REDIS_PREFIX', 'redisPrefix', 'string'],
  ['SHIM_REDIS_CLUSTER', 'redisCluster', 'bool'],
  ['SHIM_AUTO_WINDOW_MS', 'autoWindowMs', 'int'],
  ['SHIM_DEFAULT_TTL_MS', 'defaultTtlMs', 'int'],
  ['SHIM_MAX_TTL_MS', 'maxTtlMs', 'int'],
  ['SHIM_POLL_INTERVAL_MS', 'pollIntervalMs', 'int'],
  ['SHIM_MAX_BODY_BYTES', 'maxBodyBytes', 'int'],
  ['SHIM_LISTEN_KEEPALIVE_MS', 'listenKeepAliveMs', 'int'],
  ['SHIM_WORKER_CONCURRENCY', 'workerConcurrency', 'int'],
  ['SHIM_UPSTREAM_CONNECTIONS', 'upstreamConnections', 'int'],
  ['SHIM_MAX_LISTEN_TASK_IDS', 'maxListenTaskIds', 'int'],
  ['SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL', 'maxOpenTasksPerPrincipal', 'int'],
  ['SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL', 'maxOpenStreamsPerPrincipal', 'int'],
  ['SHIM_ANONYMOUS_PRINCIPAL', 'anonymousPrincipal', 'string'],
  ['SHIM_TRUST_PROXY', 'trustProxy', 'bool'],
  ['SHIM_MAX_SESSIONS_PER_PRINCIPAL', 'maxSessionsPerPrincipal', 'int'],
  ['SHIM_MAX_STREAM_BUFFER_BYTES', 'maxStreamBufferBytes', 'int'],
  ['SHIM_MAX_STREAM_BUFFER_TOTAL_BYTES', 'maxStreamBufferTotalBytes', 'int'],
  ['SHIM_SHUTDOWN_GRACE_MS', 'shutdownGraceMs', 'int'],
  ['SHIM_SHUTDOWN_DELAY_MS', 'shutdownDelayMs', 'int'],
  ['SHIM_WATCH_CONFIG', 'watchConfig', 'bool'],
  ['SHIM_LOG_LEVEL', 'logLevel', 'string'],
  ['SHIM_LOG_ARGUMENTS', 'logArguments', 'bool'],
  ['SHIM_JOB_LOCK_MS', 'jobLockMs', 'int'],
  ['SHIM_SESSION_IDLE_TTL_MS', 'sessionIdleTtlMs', 'int'],
  ['SHIM_ALLOWED_ORIGINS', 'allowedOrigins', 'list'],
  ['SHIM_LEGACY_DEPRECATION', 'legacyDeprecation', 'string'],
  ['SHIM_LEGACY_SUNSET', 'legacySunset', 'string'],
  ['SHIM_MIGRATION_GUIDE_URL', 'migrationGuideUrl', 'string'],
  ['SHIM_LEGACY', 'legacy', 'string'],
  ['SHIM_LEGACY_DRAIN', 'legacyDrain', 'bool'],
  ['SHIM_LEGACY_BROWNOUTS', 'legacyBrownouts', 'list'],
  ['SHIM_CUTOVER_QUIET_PERIOD_MS', 'cutoverQuietPeriodMs', 'int'],
  ['SHIM_DASHBOARD_TOKEN', 'dashboardToken', 'string'],
  ['SHIM_REPLICA_ID', 'replicaId', 'string'],
  ['SHIM_HEADERS_TIMEOUT_MS', 'headersTimeoutMs', 'int'],
  ['SHIM_REQUEST_TIMEOUT_MS', 'requestTimeoutMs', 'int'],
  ['SHIM_MAX_CONNECTIONS', 'maxConnections', 'int'],
];
type Kind = 'string' | 'int' | 'list' | 'bool';

/** Flag → config key; `as-is` flags arrive parsed (booleans, repeatable ones). Flags override the environment. */
const FLAG_KEYS: ReadonlyArray<[keyof typeof FLAGS, keyof ShimConfig, 'string' | 'int' | 'as-is']> = [
  ['role', 'role', 'string'],
  ['port', 'port', 'int'],
  ['host', 'host', 'string'],
  ['upstream', 'upstreamUrl', 'string'],
  ['upstream-protocol', 'upstreamProtocol', 'string'],
  ['redis', 'redisUrl', 'string'],
  ['redis-cluster', 'redisCluster', 'as-is'],
  ['deprecation', 'legacyDeprecation', 'string'],
  ['sunset', 'legacySunset', 'string'],
  ['migration-guide', 'migrationGuideUrl', 'string'],
  ['drain', 'legacyDrain', 'as-is'],
  ['legacy', 'legacy', 'string'],
  ['watch-config', 'watchConfig', 'as-is'],
  ['log-level', 'logLevel', 'string'],
  ['log-arguments', 'logArguments', 'as-is'],
  ['brownout', 'legacyBrownouts', 'as-is'],
  ['dashboard-token', 'dashboardToken', 'string'],
  ['replica-id', 'replicaId', 'string'],
  ['job-lock-ms', 'jobLockMs', 'int'],
  ['max-open-tasks', 'maxOpenTasksPerPrincipal', 'int'],
  ['max-open-streams', 'maxOpenStreamsPerPrincipal', 'int'],
  ['max-sessions', 'maxSessionsPerPrincipal', 'int'],
  ['max-stream-buffer', 'maxStreamBufferBytes', 'int'],
  ['max-stream-buffer-total', 'maxStreamBufferTotalBytes', 'int'],
  ['anonymous-principal', 'anonymousPrincipal', 'string'],
  ['trust-proxy', 'trustProxy', 'as-is'],
  ['shutdown-grace-ms', 'shutdownGraceMs', 'int'],
  ['shutdown-delay-ms', 'shutdownDelayMs', 'int'],
  ['headers-timeout-ms', 'headersTimeoutMs', 'int'],
  ['request-timeout-ms', 'requestTimeoutMs', 'int'],
  ['max-connections', 'maxConnections', 'int'],
];

const FLAGS = {
  role: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  upstream: { type: 'string' },
  'upstream-protocol': { type: 'string' },
  redis: { type: 'string' },
  'redis-cluster': { type: 'boolean' },
  policy: { type: 'string' },
  config: { type: 'string' },
  'watch-config': { type: 'boolean' },
  'log-level': { type: 'string' },
  'log-arguments': { type: 'boolean' },
  legacy: { type: 'string' },
  deprecation: { type: 'string' },
  sunset: { type: 'string' },
  'migration-guide': { type: 'string' },
  drain: { type: 'boolean' },
  brownout: { type: 'string', multiple: true },
  'dashboard-token': { type: 'string' },
  'replica-id': { type: 'string' },
  'job-lock-ms': { type: 'string' },
  'max-open-tasks': { type: 'string' },
  'max-open-streams': { type: 'string' },
  'shutdown-grace-ms': { type: 'string' },
  'shutdown-delay-ms': { type: 'string' },
  'trust-proxy': { type: 'boolean' },
  'headers-timeout-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-sessions': { type: 'string' },
  'anonymous-principal': { type: 'string' },
  'max-stream-buffer': { type: 'string' },
  'max-stream-buffer-total': { type: 'string' },
  ...AUTH_FLAGS,
  ...UPSTREAM_HEADER_FLAGS,
  help: { type: 'boolean', short: 'h' },
} as const;

export interface LoadInput {
  argv: string[];
  env: Record<string, string | undefined>;
  /** Defaults the command adds, e.g. `start` brings the demo upstream's policies. */
  base?: Partial<ShimConfig>;
}

export interface Loaded {
  config: ShimConfig;
  help: boolean;
  /** The files this configuration was read from (config, policy, tokens, JWKS), for `--watch-config`. */
  files: string[];
}

/** Keys a config file may not set: credentials and the shim's upstream headers have their own settings and files. */
const NOT_IN_CONFIG_FILE: ReadonlySet<string> = new Set(['auth', 'upstreamHeaders']);

export function loadConfig({ argv, env, base = {} }: LoadInput): Loaded {
  const problems: string[] = [];
  let flags: ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: false; strict: true }>>['values'];
  try {
    flags = parseArgs({ args: argv, options: FLAGS, allowPositionals: false, strict: true }).values;
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }

  const raw: Record<string, unknown> = { ...DEFAULT_CONFIG, ...base };
  /** Config key → the flag or variable the user set it with (a flag wins), so problems use their words. */
  const origins = new Map<string, string>();
  const files: string[] = [];
  // The config file sits under the environment and the flags: what it sets, they may override.
  const configPath = flags.config ?? env.SHIM_CONFIG_FILE;
  if (configPath) {
    files.push(configPath);
    const fromFile = readConfigFile(configPath, problems);
    for (const key of Object.keys(fromFile)) origins.set(key, `"${key}" in ${configPath}`);
    Object.assign(raw, fromFile);
  }
  for (const [name, key, kind] of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    origins.set(key, name);
    setParsed(raw, key, parseValue(`${name}`, value, kind, problems));
  }
  for (const [flag, key, kind] of FLAG_KEYS) {
    const value = flags[flag];
    if (value === undefined) continue;
    origins.set(key, `--${flag}`);
    setParsed(raw, key, kind === 'int' ? parseValue(`--${flag}`, value as string, 'int', problems) : value);
  }

  const policyPath = flags.policy ?? env.SHIM_POLICY_FILE;
  if (policyPath) {
    files.push(policyPath);
    const policies = readJsonFile('policy file', policyPath, PolicyFileSchema, problems);
    if (policies) raw.policies = mergePolicies(raw.policies as PolicyFile, policies);
  }
  const auth = resolveAuth(flags, env, problems);
  if (auth) raw.auth = auth;
  if (auth?.mode === 'tokens') {
    files.push(auth.tokensFile);
    // Read again at start; checked here so that a bad file is a configuration error like any other.
    readJsonFile('tokens file', auth.tokensFile, TokensFileSchema, problems, { secret: true });
  }
  if (auth?.mode === 'jwt' && auth.key.algorithm === 'RS256') files.push(auth.key.jwksFile);
  const upstreamHeaders = resolveUpstreamHeaders(flags, env, problems);
  if (upstreamHeaders) raw.upstreamHeaders = upstreamHeaders;

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => `${settingName(issue.path, origins)}: ${issue.message}`));
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: parsed.data as ShimConfig, help: flags.help ?? false, files };
}

/** The config file: a JSON object of configuration keys (docs/configuration.md, "Config file"). */
function readConfigFile(path: string, problems: string[]): Record<string, unknown> {
  const json = readJsonFile('config file', path, ConfigFileSchema, problems);
  if (!json) return {};
  const known = new Set(Object.keys(ConfigSchema.shape));
  const bad = Object.keys(json).filter((key) => !known.has(key) || NOT_IN_CONFIG_FILE.has(key));
  for (const key of bad) {
    problems.push(
      NOT_IN_CONFIG_FILE.has(key)
        ? `config file ${path}: '${key}' is set by its own flags and environment variables, not in the config file`
        : `config file ${path}: unknown key '${key}'`,
    );
  }
  return bad.length > 0 ? {} : json;
}

/** A value that did not parse is already a problem: keep the default so the schema does not report it twice. */
function setParsed(raw: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) raw[key] = value;
}

function parseValue(name: string, value: string, kind: Kind, problems: string[]): unknown {
  if (kind === 'string') return value;
  if (kind === 'bool') {
    if (/^(true|1|yes|on)$/i.test(value)) return true;
    if (/^(false|0|no|off)$/i.test(value)) return false;
    problems.push(`${name}: expected true or false, got "${value}"`);
    return undefined;
  }
  if (kind === 'list') return value.split(',').map((v) => v.trim()).filter(Boolean);
  if (!/^\d+$/.test(value)) {
    problems.push(`${name}: expected a whole number, got "${value}"`);
    return undefined;
  }
  return Number(value);
}

/** `secret`: the file holds credentials, and JSON.parse's message quotes the text around the error. */
function readJsonFile<S extends z.ZodType>(what: string, path: string, schema: S, problems: string[], { secret = false } = {}): z.infer<S> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push(`${what} ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    problems.push(secret ? `${what} ${path}: not JSON` : `${what} ${path}: not JSON (${(err as Error).message})`);
    return undefined;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    problems.push(...describe(parsed.error).map((p) => `${what} ${path}: ${p}`));
    return undefined;
  }
  return parsed.data;
}

function mergePolicies(base: PolicyFile, over: PolicyFile): PolicyFile {
  return { default: over.default ?? base.default, tools: { ...base.tools, ...over.tools } };
}

/**
 * A setting as the user wrote it: the flag or variable that set it, else every way to set it (a
 * rule between settings can name one left at its default); a list's entry counts from 1.
 */
function settingName(path: readonly PropertyKey[], origins: ReadonlyMap<string, string>): string {
  const [key, ...rest] = path.map(String);
  const ways = [...FLAG_KEYS.filter(([, k]) => k === key).map(([flag]) => `--${flag}`), ...ENV_KEYS.filter(([, k]) => k === key).map(([name]) => name)];
  const name = origins.get(key ?? '') ?? (ways.length ? ways.join(' / ') : path.join('.'));
  if (rest.length === 0 || !ways.length) return name;
  return /^\d+$/.test(rest[0] ?? '') ? `${name} (entry ${Number(rest[0]) + 1})` : `${name} ${rest.join('.')}`;
}

/** A problem inside a file names the file's own keys (`tools.greet`). */
function describe(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}
