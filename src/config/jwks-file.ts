import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The public part of one RS256 verification key, as a JWK. */
export interface JwksKey {
  kid?: string;
  jwk: { kty: 'RSA'; n: string; e: string };
}

export class JwksFileError extends Error {
  constructor(path: string, problem: string) {
    super(`JWKS file ${path}: ${problem}`);
    this.name = 'JwksFileError';
  }
}

const MIN_RSA_BITS = 2048;

/**
 * The RS256 keys of a local JWKS file (`{"keys": [...]}`). Keys meant for something else (another
 * `kty`, `alg` or `use`) are skipped, so that an identity provider's published set can be used as
 * it is; private members are dropped, so a file that holds private keys leaks nothing further.
 * With more than one key every key needs a distinct `kid`, since that is how a token names its key.
 */
export function readJwksFile(path: string): JwksKey[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new JwksFileError(path, `cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new JwksFileError(path, `not JSON (${(err as Error).message})`);
  }
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new JwksFileError(path, 'expected {"keys": [...]}');

  const usable: JwksKey[] = [];
  keys.forEach((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null) throw new JwksFileError(path, `keys[${index}] is not an object`);
    const jwk = entry as Record<string, unknown>;
    if (jwk.kty !== 'RSA' || (jwk.alg !== undefined && jwk.alg !== 'RS256') || (jwk.use !== undefined && jwk.use !== 'sig')) return;
    const name = typeof jwk.kid === 'string' ? `key '${jwk.kid}'` : `keys[${index}]`;
    if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid === '')) throw new JwksFileError(path, `${name}: kid must be a non-empty string`);
    if (typeof jwk.n !== 'string' || typeof jwk.e !== 'string') throw new JwksFileError(path, `${name}: an RSA key needs n and e`);
    const publicJwk = { kty: 'RSA' as const, n: jwk.n, e: jwk.e };
    let bits: number | undefined;
    try {
      bits = createPublicKey({ key: publicJwk, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
    } catch {
      throw new JwksFileError(path, `${name}: not a valid RSA public key`);
    }
    if (bits === undefined || bits < MIN_RSA_BITS) throw new JwksFileError(path, `${name}: RS256 needs a key of at least ${MIN_RSA_BITS} bits`);
    usable.push({ kid: jwk.kid as string | undefined, jwk: publicJwk });
  });

  if (usable.length === 0) throw new JwksFileError(path, 'no RS256 signing key (kty RSA, alg RS256 or none, use sig or none)');
  if (usable.length > 1) {
    if (usable.some((k) => k.kid === undefined)) throw new JwksFileError(path, 'with more than one key, every key needs a kid');
    const kids = usable.map((k) => k.kid);
    const duplicate = kids.find((kid, i) => kids.indexOf(kid) !== i);
    if (duplicate !== undefined) throw new JwksFileError(path, `kid '${duplicate}' is used by more than one key`);
  }
  return usable;
}
