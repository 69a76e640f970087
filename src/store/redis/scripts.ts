import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ReplyError } from 'ioredis';
import type { RedisConnection } from './connection.js';
import { commandArgs, FlatCommand } from './flat-command.js';

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
 * A runner per script of a set: EVALSHA, and EVAL when Redis answers NOSCRIPT (a restart or a
 * failover emptied its script cache; EVAL caches the script again).
 *
 * Not ioredis's defineCommand: every pipeline ioredis builds (auto-pipelining builds one per
 * batch of commands) copies each defined command onto itself, which made a tasks/get allocate
 * ~2 KiB that outlived young-generation collections (docs/decisions/0008-redis-writes.md).
 */
export function defineScripts<Name extends string>(redis: RedisConnection, set: ScriptSet<Name>): Record<Name, RunKeysScript> {
  const common = set.common ? readLua(set.dir, 'common') : '';
  const entries = set.names.map((name): [Name, RunKeysScript] => {
    const numberOfKeys = set.keyCounts?.[name] ?? 1;
    const prelude = (set.prelude?.[name] ?? []).map((part) => readLua(set.dir, part)).join('');
    const lua = common + prelude + readLua(set.dir, name);
    const sha = createHash('sha1').update(lua).digest('hex');
    const readOnly = set.readOnly?.includes(name) ?? false;
    const [evalSha, evalLua] = readOnly ? ['evalsha_ro', 'eval_ro'] : ['evalsha', 'eval'];
    return [
      name,
      (keys, args) => {
        if (keys.length !== numberOfKeys) throw new Error(`Script ${name} takes ${numberOfKeys} keys, not ${keys.length}`);
        // EVALSHA names its keys after the count, so a Cluster routes it by the first key.
        return send(redis, evalSha, sha, keys, args).catch((err: unknown) => {
          if (err instanceof ReplyError && (err as Error).message.startsWith('NOSCRIPT')) return send(redis, evalLua, lua, keys, args);
          throw err;
        });
      },
    ];
  });
  return Object.fromEntries(entries) as Record<Name, RunKeysScript>;
}

/** `EVALSHA sha` or `EVAL lua`, then the keys' count, the keys and the arguments. */
function send(redis: RedisConnection, command: string, script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
  return redis.sendCommand(new FlatCommand(command, commandArgs([script, String(keys.length)], keys, args), { replyEncoding: 'utf8' })) as Promise<unknown>;
}

/** Every task script, each run on one task's hash. */
export function defineTaskScripts(redis: RedisConnection): Record<Operation, RunScript> {
  const scripts = defineScripts(redis, {
    dir: new URL('./lua/', import.meta.url),
    names: OPERATIONS,
    common: true,
    prelude: { create: ['new-task'] },
  });
  const entries = OPERATIONS.map((operation): [Operation, RunScript] => [
    operation,
    (key, args) => scripts[operation]([key], args),
  ]);
  return Object.fromEntries(entries) as Record<Operation, RunScript>;
}
