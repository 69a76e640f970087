import { randomBytes } from 'node:crypto';

const ID_BYTES = 16;
/**
 * CSPRNG bytes drawn 256 ids at a time, each byte used once (as Node's randomUUID caches its
 * entropy): one randomBytes call per id was a measurable share of task creation.
 */
const POOL_BYTES = ID_BYTES * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * 128 random bits as base64url: 22 header-safe characters, well above the 122 bits the
 * security model asks for, and no structure an attacker could enumerate.
 */
export function newTaskId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

/** Session ids and other opaque tokens use the same generator. */
export const newOpaqueId = newTaskId;

/** Task ids we mint are exactly this shape; anything else cannot be ours. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
