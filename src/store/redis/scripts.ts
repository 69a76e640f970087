import { readFileSync } from 'node:fs';
import type { RedisConnection } from './connection.js';

const OPERATIONS = [
  'create',
  'mark-started',
  'set-status-message',
  'request-input',
  'answer-input',
  'withdraw-input',
  'finish',
  'cancel',
  'touch-session',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Runs one operation's script on one task's hash; `args` follow the common ARGV header (see common.lua). */
export type RunScript = (key: string, args: readonly string[]) => Promise<unknown>;

/** Runs a script on any number of keys (all of one hash tag, so that a Redis Cluster can run it). */
export type RunKeysScript = (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

export interface ScriptSet<Name extends string> {
  /** The folder holding `<name>.lua` for each name, and `common.lua` when `common` is set. */
  dir: URL;
  names: readonly Name[];
  /** Prefix of the command names ioredis defines; namespaced, as they live on a client the caller may share. */
  namespace: string;
  /** Prepend `common.lua` to every script. */
  common?: boolean;
  /** Per script, further files of `dir` prepended after `common.lua`: functions several scripts share. */
  prelude?: Partial<Record<Name, readonly string[]>>;
  /** Scripts that never write, sent as EVALSHA_RO so that a replica may serve them. */
  readOnly?: readonly Name[];
  /** How many KEYS each script takes, when not one. */
  keyCounts?: Partial<Record<Name, number>>;
}

function readLua(dir: URL, name: string): string {
  return readFileSync(new URL(`${name}.lua`, dir), 'utf8');
}

/**
 * Defines every script of a set on `redis` (EVALSHA, falling back to EVAL after a restart
 * flushed the script cache) and returns a runner per script.
 */
export function defineScripts<Name extends string>(redis: RedisConnection, set: ScriptSet<Name>): Record<Name, RunKeysScript> {
  const common = set.common ? readLua(set.dir, 'common') : '';
  const commands = redis as unknown as Record<string, (...args: (string | number)[]) => Promise<unknown>>;
  const entries = set.names.map((name): [Name, RunKeysScript] => {
    const command = `${set.namespace}_${name.replaceAll('-', '_')}`;
    const numberOfKeys = set.keyCounts?.[name] ?? 1;
    // A fixed key count puts the first key first, which is what a Cluster's auto-pipelining routes
    // by (a leading count would be hashed as if it were the key, and the pipeline refused).
    const prelude = (set.prelude?.[name] ?? []).map((part) => readLua(set.dir, part)).join('');
    redis.defineCommand(command, { lua: common + prelude + readLua(set.dir, name), numberOfKeys, readOnly: set.readOnly?.includes(name) });
    return [
      name,
      (keys, args) => {
        if (keys.length !== numberOfKeys) throw new Error(`Script ${command} takes ${numberOfKeys} keys, not ${keys.length}`);
        return commands[command]!.call(redis, ...keys, ...args);
      },
    ];
  });
  return Object.fromEntries(entries) as Record<Name, RunKeysScript>;
}

/** Every task script, each run on one task's hash. */
export function defineTaskScripts(redis: RedisConnection): Record<Operation, RunScript> {
  const scripts = defineScripts(redis, {
    dir: new URL('./lua/', import.meta.url),
    names: OPERATIONS,
    namespace: 'mtsTask',
    common: true,
    prelude: { create: ['new-task'] },
  });
  const entries = OPERATIONS.map((operation): [Operation, RunScript] => [
    operation,
    (key, args) => scripts[operation]([key], args),
  ]);
  return Object.fromEntries(entries) as Record<Operation, RunScript>;
}
