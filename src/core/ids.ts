import { randomBytes } from 'node:crypto';

/**
 * 128 random bits as base64url: 22 header-safe characters, well above the 122 bits the
 * security model asks for, and no structure an attacker could enumerate.
 */
export function newTaskId(): string {
  return randomBytes(16).toString('base64url');
}

/** Session ids and other opaque tokens use the same generator. */
export const newOpaqueId = newTaskId;

/** Task ids we mint are exactly this shape; anything else cannot be ours. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
