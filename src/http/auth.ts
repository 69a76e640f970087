import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { TokensFileSchema, type ShimConfig } from '../config/schema.js';

/** The principal every task is bound to, from the verified credential; undefined means 401. */
export type Authenticator = (headers: IncomingHttpHeaders) => string | undefined;

export const ANONYMOUS = 'anonymous';

export function createAuthenticator(auth: ShimConfig['auth']): Authenticator {
  if (auth.mode === 'none') return () => ANONYMOUS;
  const tokens = new Map(Object.entries(loadTokens(auth.tokensFile)));
  return (headers) => {
    const header = headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    return match ? tokens.get(match[1] as string) : undefined;
  };
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
