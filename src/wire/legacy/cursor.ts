import { createHash } from 'node:crypto';
import { InvalidParamsError } from '../../core/errors.js';
import type { TaskPageEntry } from '../../session/session-store.js';

/**
 * `tasks/list` cursors: the position after the last entry of a page, bound to the session that
 * issued it (by a digest, so the session id itself never appears). Opaque to clients.
 */
function sessionTag(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('base64url').slice(0, 16);
}

export function encodeCursor(sessionId: string, last: TaskPageEntry): string {
  return Buffer.from(JSON.stringify({ s: sessionTag(sessionId), c: last.createdAt, t: last.taskId })).toString('base64url');
}

export function decodeCursor(sessionId: string, cursor: string): TaskPageEntry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidParamsError('Invalid cursor');
  }
  const { s, c, t } = (parsed ?? {}) as { s?: unknown; c?: unknown; t?: unknown };
  if (typeof s !== 'string' || typeof c !== 'number' || !Number.isInteger(c) || typeof t !== 'string') {
    throw new InvalidParamsError('Invalid cursor');
  }
  if (s !== sessionTag(sessionId)) throw new InvalidParamsError('Invalid cursor: it belongs to another session');
  return { createdAt: c, taskId: t };
}
