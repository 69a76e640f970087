import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { TokensFileSchema } from '../../config/schema.js';
import { bearerToken, INVALID, MISSING, type Authenticator } from './bearer.js';

/**
 * `Authorization: Bearer <token>` looked up in the tokens file, read once at start. The lookup is
 * by the token's SHA-256 digest: a string compare stops at the first differing character (and
 * a hash table compares lengths first), so keyed by the tokens themselves its time would tell
 * how much of a guess was right; keyed by digests it tells nothing about any token.
 */
export function tokensAuthenticator(path: string): Authenticator {
  const principals = new Map(Object.entries(loadTokens(path)).map(([token, principal]) => [digest(token), { principal }]));
  return (headers) => {
    const token = bearerToken(headers);
    if (token === undefined) return MISSING;
    return (token !== null && principals.get(digest(token))) || INVALID;
  };
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

function loadTokens(path: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`tokens file ${path}: ${(err as Error).message}`, { cause: err });
  }
  const parsed = TokensFileSchema.safeParse(json);
  if (!parsed.success) throw new Error(`tokens file ${path}: expected {"<token>": "<principal>"}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}
