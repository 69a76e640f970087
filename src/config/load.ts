import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { ConfigSchema, DEFAULT_CONFIG, PolicyFileSchema, type PolicyFile, type ShimConfig } from './schema.js';

/** Every problem found in the configuration, each on its own line, so one start shows them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Environment variable → config key. Flags override these; both override the defaults. */
const ENV_KEYS: ReadonlyArray<[string, keyof ShimConfig, 'string' | 'int' | 'list']> = [
  ['PORT', 'port', 'int'],
  ['HOST', 'host', 'string'],
  ['UPSTREAM_URL', 'upstreamUrl', 'string'],
  ['REDIS_URL', 'redisUrl', 'string'],
  ['SHIM_REDIS_PREFIX', 'redisPrefix', 'string'],
  ['SHIM_AUTO_WINDOW_MS', 'autoWindowMs', 'int'],
  ['SHIM_DEFAULT_TTL_MS', 'defaultTtlMs', 'int'],
  ['SHIM_MAX_TTL_MS', 'maxTtlMs', 'int'],
  ['SHIM_POLL_INTERVAL_MS', 'pollIntervalMs', 'int'],
  ['SHIM_MAX_BODY_BYTES', 'maxBodyBytes', 'int'],
  ['SHIM_LISTEN_KEEPALIVE_MS', 'listenKeepAliveMs', 'int'],
  ['SHIM_WORKER_CONCURRENCY', 'workerConcurrency', 'int'],
  ['SHIM_SESSION_IDLE_TTL_MS', 'sessionIdleTtlMs', 'int'],
  ['SHIM_ALLOWED_ORIGINS', 'allowedOrigins', 'list'],
];

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  upstream: { type: 'string' },
  redis: { type: 'string' },
  policy: { type: 'string' },
  tokens: { type: 'string' },
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
}

export function loadConfig({ argv, env, base = {} }: LoadInput): Loaded {
  const problems: string[] = [];
  let flags: ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: false; strict: true }>>['values'];
  try {
    flags = parseArgs({ args: argv, options: FLAGS, allowPositionals: false, strict: true }).values;
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }

  const raw: Record<string, unknown> = { ...DEFAULT_CONFIG, ...base };
  for (const [name, key, kind] of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    raw[key] = parseValue(`${name}`, value, kind, problems);
  }
  if (flags.port !== undefined) raw.port = parseValue('--port', flags.port, 'int', problems);
  if (flags.host !== undefined) raw.host = flags.host;
  if (flags.upstream !== undefined) raw.upstreamUrl = flags.upstream;
  if (flags.redis !== undefined) raw.redisUrl = flags.redis;

  const policyPath = flags.policy ?? env.SHIM_POLICY_FILE;
  if (policyPath) {
    const policies = readPolicyFile(policyPath, problems);
    if (policies) raw.policies = mergePolicies(raw.policies as PolicyFile, policies);
  }
  const tokensFile = flags.tokens ?? env.SHIM_TOKENS_FILE;
  if (tokensFile) raw.auth = { mode: 'tokens', tokensFile };

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) problems.push(...describe(parsed.error));
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: parsed.data as ShimConfig, help: flags.help ?? false };
}

function parseValue(name: string, value: string, kind: 'string' | 'int' | 'list', problems: string[]): unknown {
  if (kind === 'string') return value;
  if (kind === 'list') return value.split(',').map((v) => v.trim()).filter(Boolean);
  if (!/^\d+$/.test(value)) {
    problems.push(`${name}: expected a whole number, got "${value}"`);
    return undefined;
  }
  return Number(value);
}

function readPolicyFile(path: string, problems: string[]): PolicyFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push(`policy file ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    problems.push(`policy file ${path}: not JSON (${(err as Error).message})`);
    return undefined;
  }
  const parsed = PolicyFileSchema.safeParse(json);
  if (!parsed.success) {
    problems.push(...describe(parsed.error).map((p) => `policy file ${path}: ${p}`));
    return undefined;
  }
  return parsed.data;
}

function mergePolicies(base: PolicyFile, over: PolicyFile): PolicyFile {
  return { default: over.default ?? base.default, tools: { ...base.tools, ...over.tools } };
}

function describe(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}
