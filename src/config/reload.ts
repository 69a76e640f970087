import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { AuthConfig } from './auth-schema.js';
import type { ShimConfig } from './schema.js';

/** The cutover controls: all of them change live (the cutover stage takes new controls). */
const CUTOVER_KEYS = ['legacy', 'legacyDrain', 'legacyBrownouts', 'legacyDeprecation', 'legacySunset', 'migrationGuideUrl', 'cutoverQuietPeriodMs'] as const;

/** What a reload applies (docs/operations.md, "Reloading"); every other setting needs a restart. */
const LIVE_KEYS: ReadonlySet<string> = new Set<string>(['auth', 'policies', ...CUTOVER_KEYS]);

type CutoverSettings = Pick<ShimConfig, (typeof CUTOVER_KEYS)[number]>;

export function cutoverSettings(config: ShimConfig): CutoverSettings {
  return Object.fromEntries(CUTOVER_KEYS.map((key) => [key, config[key]])) as CutoverSettings;
}

/**
 * What a reload from `before` to `after` changes live, one line each. Key material is named by
 * its file and digest-compared, never shown; the other values are shown as configured.
 */
export function describeLiveChanges(before: ShimConfig, after: ShimConfig, keysBefore: string, keysAfter: string): string[] {
  const lines: string[] = [];
  if (!isDeepStrictEqual(before.auth, after.auth) || keysBefore !== keysAfter) lines.push(`auth: ${describeAuth(after.auth)}`);
  if ((before.policies.default ?? 'auto') !== (after.policies.default ?? 'auto')) {
    lines.push(`policies: default ${before.policies.default ?? 'auto'} → ${after.policies.default ?? 'auto'}`);
  }
  const tools = [...new Set([...Object.keys(before.policies.tools), ...Object.keys(after.policies.tools)])].sort();
  const changedTools = tools.filter((tool) => !isDeepStrictEqual(before.policies.tools[tool], after.policies.tools[tool]));
  for (const tool of changedTools) lines.push(`policies: ${tool} ${policyText(before.policies.tools[tool])} → ${policyText(after.policies.tools[tool])}`);
  for (const key of CUTOVER_KEYS) {
    if (!isDeepStrictEqual(before[key], after[key])) lines.push(`${key}: ${valueText(before[key])} → ${valueText(after[key])}`);
  }
  return lines;
}

/** Settings that differ but only take effect at the next start. */
export function settingsNeedingRestart(before: ShimConfig, after: ShimConfig): string[] {
  return (Object.keys(after) as Array<keyof ShimConfig>).filter((key) => !LIVE_KEYS.has(key) && !isDeepStrictEqual(before[key], after[key]));
}

/**
 * A digest of the key material behind `auth` as the files hold it now, so that a reload tells
 * whether a rotated file changed anything. A file that cannot be read digests as its error.
 */
export function keyMaterialDigest(auth: AuthConfig): string {
  const hash = createHash('sha256');
  if (auth.mode === 'tokens') hash.update(fileText(auth.tokensFile));
  if (auth.mode === 'jwt') hash.update(auth.key.algorithm === 'HS256' ? auth.key.secret : fileText(auth.key.jwksFile));
  return hash.digest('base64url');
}

function describeAuth(auth: AuthConfig): string {
  switch (auth.mode) {
    case 'none':
      return 'mode none';
    case 'tokens':
      return `mode tokens, tokens file ${auth.tokensFile} re-read`;
    case 'jwt':
      return auth.key.algorithm === 'HS256' ? 'mode jwt (HS256), secret re-read' : `mode jwt (RS256), JWKS file ${auth.key.jwksFile} re-read`;
  }
}

function policyText(policy: ShimConfig['policies']['tools'][string] | undefined): string {
  return policy === undefined ? '(none)' : typeof policy === 'string' ? policy : JSON.stringify(policy);
}

function valueText(value: unknown): string {
  return value === undefined ? '(none)' : Array.isArray(value) ? `[${value.join(', ')}]` : String(value);
}

function fileText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    return `unreadable: ${(err as NodeJS.ErrnoException).code ?? ''}`;
  }
}
