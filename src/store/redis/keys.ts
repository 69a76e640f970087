import { createHash } from 'node:crypto';
import type { OpenKind } from '../task-store.js';

/** Several shims (or test runs) can share one Redis by giving each its own prefix. */
export const DEFAULT_PREFIX = 'mts';

/**
 * Braces in the prefix would become the hash tag and put every task in one cluster slot, so a
 * prefix must not contain them.
 */
export function checkPrefix(prefix: string): string {
  if (prefix === '' || /[{}]/.test(prefix)) throw new Error(`Invalid Redis key prefix: ${JSON.stringify(prefix)}`);
  return prefix;
}

/** One hash per task. The task id is the hash tag, so a Redis Cluster keeps all of a task's keys in one slot. */
export function taskKey(prefix: string, taskId: string): string {
  return `${prefix}:task:{${taskId}}`;
}

/**
 * A principal's open tasks, streams or legacy sessions (a sorted set, see lua/hold-open-1.lua). The principal is
 * hashed: no key name shows who holds what, and the hash is the key's own hash tag, so that a
 * Redis Cluster spreads principals over slots and every operation on the set is single-key.
 */
export function openKey(prefix: string, kind: OpenKind, principal: string): string {
  const tag = createHash('sha256').update(principal).digest('base64url').slice(0, 22);
  return `${prefix}:${kind === 'tasks' ? 'open' : kind}:{${tag}}`;
}

/** One channel carries every task's changes; subscribers filter in process. */
export function eventsChannel(prefix: string): string {
  return `${prefix}:events`;
}

/**
 * Per-key hash fields: outstanding input requests and answers. The Lua scripts use the same
 * literals, plus `wd:<key>` for withdrawn keys, which no read needs.
 */
export const INPUT_REQUEST_FIELD = 'ir:';
export const ANSWER_FIELD = 'ans:';
