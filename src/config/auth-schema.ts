import { z } from 'zod';

/** RFC 7518 §3.2: an HS256 key shorter than the hash output weakens the MAC. */
export const MIN_HS256_SECRET_BYTES = 32;

const jwtKey = z.discriminatedUnion('algorithm', [
  z.strictObject({
    algorithm: z.literal('HS256'),
    secret: z.string().refine((s) => Buffer.byteLength(s, 'utf8') >= MIN_HS256_SECRET_BYTES, {
      error: `the HS256 secret must be at least ${MIN_HS256_SECRET_BYTES} bytes`,
    }),
  }),
  z.strictObject({ algorithm: z.literal('RS256'), jwksFile: z.string().min(1) }),
]);

/**
 * How a request proves its principal. `none`: everyone is the anonymous principal. `tokens`:
 * `Authorization: Bearer` looked up in a JSON file. `jwt`: a bearer JWT verified with one
 * algorithm's local key material, its principal taken from one claim.
 */
export const AuthSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('none') }),
  z.strictObject({ mode: z.literal('tokens'), tokensFile: z.string().min(1) }),
  z.strictObject({
    mode: z.literal('jwt'),
    key: jwtKey,
    principalClaim: z.string().min(1),
    issuer: z.string().min(1).optional(),
    audience: z.string().min(1).optional(),
    /** Leeway for `exp` and `nbf` between the issuer's clock and ours. */
    clockToleranceMs: z.number().int().min(0).max(300_000),
  }),
]);
export type AuthConfig = z.infer<typeof AuthSchema>;
export type JwtAuthConfig = Extract<AuthConfig, { mode: 'jwt' }>;

export const JWT_DEFAULTS = { principalClaim: 'sub', clockToleranceMs: 30_000 } as const;
