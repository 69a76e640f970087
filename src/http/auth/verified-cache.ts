import { createHash } from 'node:crypto';

interface Entry {
  principal: string;
  expiresAt: number;
}

/**
 * Principals of recently verified tokens, so that a client's every request does not pay for a
 * signature check. Safe because the key is the whole token (a digest of it: the cache holds no
 * usable credential): the same bytes verify the same way, and the only thing that changes with
 * time, expiry, is bounded by evicting an entry no later than the token's `exp`. Bounded in size;
 * the least recently used entry goes first. Refused tokens are not cached (anyone can mint those).
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  get(token: string, now: number): string | undefined {
    const key = digest(token);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (now >= entry.expiresAt) return undefined;
    this.entries.set(key, entry);
    return entry.principal;
  }

  /** `expiresAtMs`: the token's `exp` in milliseconds. */
  set(token: string, principal: string, expiresAtMs: number, now: number): void {
    const expiresAt = Math.min(expiresAtMs, now + this.maxAgeMs);
    if (expiresAt <= now) return;
    const key = digest(token);
    this.entries.delete(key);
    this.entries.set(key, { principal, expiresAt });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
