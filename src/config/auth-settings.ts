import { readFileSync } from 'node:fs';
import { JWT_DEFAULTS, MIN_HS256_SECRET_BYTES, type AuthConfig } from './auth-schema.js';
import { JwksFileError, readJwksFile } from './jwks-file.js';

/** The flags of the authentication settings, for `parseArgs`. */
export const AUTH_FLAGS = {
  auth: { type: 'string' },
  tokens: { type: 'string' },
  'jwt-secret-file': { type: 'string' },
  jwks: { type: 'string' },
  'jwt-principal-claim': { type: 'string' },
  'jwt-issuer': { type: 'string' },
  'jwt-audience': { type: 'string' },
} as const;

type Flags = Partial<Record<keyof typeof AUTH_FLAGS, string>>;
type Env = Record<string, string | undefined>;

/** A setting's value and where it came from, so that a problem names what the operator typed. */
interface Setting {
  value: string;
  name: string;
}

function setting(flags: Flags, flag: keyof Flags | undefined, env: Env, envName: string): Setting | undefined {
  const fromFlag = flag === undefined ? undefined : flags[flag];
  if (fromFlag !== undefined) return { value: fromFlag, name: `--${flag}` };
  const fromEnv = env[envName];
  return fromEnv === undefined || fromEnv === '' ? undefined : { value: fromEnv, name: envName };
}

const MODES = ['none', 'tokens', 'jwt'] as const;
type Mode = (typeof MODES)[number];

/**
 * The auth mode and its settings. `--auth`/`SHIM_AUTH` names the mode; without it a tokens file
 * means `tokens` (as before JWT existed) and JWT key material means `jwt`. Settings of a mode that
 * is not in force are problems, not silently ignored: an operator who set a JWT issuer expects it
 * to be checked. Returns undefined when a problem was recorded.
 */
export function resolveAuth(flags: Flags, env: Env, problems: string[]): AuthConfig | undefined {
  const mode = setting(flags, 'auth', env, 'SHIM_AUTH');
  const tokensFile = setting(flags, 'tokens', env, 'SHIM_TOKENS_FILE');
  // A secret on the command line shows in `ps`: the environment or a file only.
  const secret = setting(flags, undefined, env, 'SHIM_JWT_SECRET');
  const secretFile = setting(flags, 'jwt-secret-file', env, 'SHIM_JWT_SECRET_FILE');
  const jwksFile = setting(flags, 'jwks', env, 'SHIM_JWKS_FILE');
  const claim = setting(flags, 'jwt-principal-claim', env, 'SHIM_JWT_PRINCIPAL_CLAIM');
  const issuer = setting(flags, 'jwt-issuer', env, 'SHIM_JWT_ISSUER');
  const audience = setting(flags, 'jwt-audience', env, 'SHIM_JWT_AUDIENCE');
  const tolerance = setting(flags, undefined, env, 'SHIM_JWT_CLOCK_TOLERANCE_MS');
  const jwtSettings = [secret, secretFile, jwksFile, claim, issuer, audience, tolerance].filter((s) => s !== undefined);
  const jwtKeys = [secret, secretFile, jwksFile].filter((s) => s !== undefined);

  if (mode !== undefined && !(MODES as readonly string[]).includes(mode.value)) {
    problems.push(`${mode.name}: expected none, tokens or jwt, got "${mode.value}"`);
    return undefined;
  }
  let chosen = mode?.value as Mode | undefined;
  if (chosen === undefined) {
    if (tokensFile && jwtKeys.length > 0) {
      problems.push(`${tokensFile.name} and ${jwtKeys.map((s) => s.name).join(', ')} are both set: choose one with --auth or SHIM_AUTH`);
      return undefined;
    }
    chosen = tokensFile ? 'tokens' : jwtKeys.length > 0 ? 'jwt' : 'none';
  }

  const stray = [...(chosen === 'tokens' ? [] : [tokensFile]), ...(chosen === 'jwt' ? [] : jwtSettings)].filter((s) => s !== undefined);
  if (stray.length > 0) {
    problems.push(`${stray.map((s) => s.name).join(', ')} ${stray.length === 1 ? 'does' : 'do'} not apply to auth mode ${chosen}`);
    return undefined;
  }
  if (chosen === 'none') return { mode: 'none' };
  if (chosen === 'tokens') {
    if (!tokensFile) {
      problems.push('auth mode tokens needs --tokens FILE or SHIM_TOKENS_FILE');
      return undefined;
    }
    return { mode: 'tokens', tokensFile: tokensFile.value };
  }

  if (jwtKeys.length !== 1) {
    problems.push(
      jwtKeys.length === 0
        ? 'auth mode jwt needs SHIM_JWT_SECRET or SHIM_JWT_SECRET_FILE (--jwt-secret-file) for HS256, or SHIM_JWKS_FILE (--jwks) for RS256'
        : `${jwtKeys.map((s) => s.name).join(' and ')} are both set: auth mode jwt takes one key source (one algorithm)`,
    );
    return undefined;
  }
  const key = jwtKey(secret, secretFile, jwksFile as Setting, problems);
  const toleranceMs = tolerance === undefined ? JWT_DEFAULTS.clockToleranceMs : wholeNumber(tolerance, problems);
  if (key === undefined || toleranceMs === undefined) return undefined;
  return {
    mode: 'jwt',
    key,
    principalClaim: claim?.value ?? JWT_DEFAULTS.principalClaim,
    ...(issuer ? { issuer: issuer.value } : {}),
    ...(audience ? { audience: audience.value } : {}),
    clockToleranceMs: toleranceMs,
  };
}

function jwtKey(secret: Setting | undefined, secretFile: Setting | undefined, jwksFile: Setting, problems: string[]): Extract<AuthConfig, { mode: 'jwt' }>['key'] | undefined {
  if (secret) return hs256(secret.value, secret.name, problems);
  if (secretFile) {
    let text: string;
    try {
      // Editors end files with a newline that nobody means as part of the secret.
      text = readFileSync(secretFile.value, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${secretFile.name} ${secretFile.value}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      return undefined;
    }
    return hs256(text, `${secretFile.name} ${secretFile.value}`, problems);
  }
  try {
    // Read again at start; checked here so that a bad file is a configuration error like any other.
    readJwksFile(jwksFile.value);
  } catch (err) {
    if (!(err instanceof JwksFileError)) throw err;
    problems.push(err.message);
    return undefined;
  }
  return { algorithm: 'RS256', jwksFile: jwksFile.value };
}

/** Checked here, where the secret's source is known, so that the problem names it (never the secret). */
function hs256(secret: string, source: string, problems: string[]): Extract<AuthConfig, { mode: 'jwt' }>['key'] | undefined {
  if (Buffer.byteLength(secret, 'utf8') >= MIN_HS256_SECRET_BYTES) return { algorithm: 'HS256', secret };
  problems.push(`${source}: the HS256 secret must be at least ${MIN_HS256_SECRET_BYTES} bytes`);
  return undefined;
}

function wholeNumber(s: Setting, problems: string[]): number | undefined {
  if (/^\d+$/.test(s.value)) return Number(s.value);
  problems.push(`${s.name}: expected a whole number, got "${s.value}"`);
  return undefined;
}
