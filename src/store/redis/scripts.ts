import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

const OPERATIONS = [
  'create',
  'mark-started',
  'set-status-message',
  'request-input',
  'answer-input',
  'withdraw-input',
  'finish',
  'cancel',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Runs one operation's script on one task's hash; `args` follow the common ARGV header (see common.lua). */
export type RunScript = (key: string, args: readonly string[]) => Promise<unknown>;

function readLua(name: string): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
}

/**
 * Defines every task script on `redis` (EVALSHA, falling back to EVAL after a restart flushed
 * the script cache) and returns a runner per operation.
 */
export function defineTaskScripts(redis: Redis): Record<Operation, RunScript> {
  const common = readLua('common');
  const commands = redis as unknown as Record<string, (key: string, ...args: string[]) => Promise<unknown>>;
  const entries = OPERATIONS.map((operation): [Operation, RunScript] => {
    // Namespaced, as the commands live on a client the caller may share.
    const command = `mtsTask_${operation.replaceAll('-', '_')}`;
    redis.defineCommand(command, { numberOfKeys: 1, lua: common + readLua(operation) });
    return [operation, (key, args) => commands[command]!.call(redis, key, ...args)];
  });
  return Object.fromEntries(entries) as Record<Operation, RunScript>;
}
