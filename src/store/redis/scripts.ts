import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { ReplyError, type ChainableCommander } from 'ioredis';
import type { RedisConnection } from './connection.js';
import { commandArgs, FlatCommand } from './flat-command.js';

/** Runs a script on its keys (all of one hash tag, so that a Redis Cluster can run it). */
export type RunKeysScript = (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

/** Queues a script into a MULTI: it runs with the transaction's other commands, or not at all. */
export type QueueScript = (transaction: ChainableCommander, keys: readonly string[], args: readonly string[]) => void;

/** One script of a folder, with its includes in place. */
interface Script {
  name: string;
  keyCount: number;
  lua: string;
  sha: string;
  readOnly: boolean;
}

/** `<name>-<number of KEYS>.lua`: the name's words start with a letter, so the count is unambiguous. */
const SCRIPT_FILE = /^([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-(\d+)\.lua$/;
/** `--- @include "<name>"` on a line of its own: the line becomes `includes/<name>.lua`. */
const INCLUDE = /^--- @include "([a-z][a-z0-9-]*)"$/gm;
/** A script that never writes, sent as EVALSHA_RO so that a Redis replica may serve it. */
const READ_ONLY = /^--- @read-only$/m;
const KEY_INDEX = /\bKEYS\[(\d+)\]/g;

/** Each folder is read once per process, whatever number of connections use it. */
const folders = new Map<string, ReadonlyMap<string, Script>>();

/**
 * The scripts of one folder (the Lua convention, docs/decisions/0027-lua-and-fan-out.md): every
 * `.lua` file in it is a script named `<name>-<number of KEYS>.lua`; `includes/` holds the
 * preludes that scripts pull in with `--- @include "<name>"` lines (each once per script, includes
 * of includes too). A file that breaks the convention, or a script that names a key beyond its
 * count, fails the load, so a wrong count cannot reach Redis.
 */
function readFolder(dir: URL): ReadonlyMap<string, Script> {
  let scripts = folders.get(dir.href);
  if (scripts) return scripts;
  const read = new Map<string, Script>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
    const match = SCRIPT_FILE.exec(entry.name);
    if (!match) throw new Error(`Lua script ${entry.name} in ${dir.pathname} is not named <name>-<number of keys>.lua`);
    const [, name, count] = match as unknown as [string, string, string];
    if (read.has(name)) throw new Error(`Lua script ${name} in ${dir.pathname} has two files`);
    const keyCount = Number(count);
    const source = readFileSync(new URL(entry.name, dir), 'utf8');
    const lua = withIncludes(dir, source, new Set());
    for (const [, index] of lua.matchAll(KEY_INDEX)) {
      if (Number(index) > keyCount) throw new Error(`Lua script ${entry.name} reads KEYS[${index}] but its file name declares ${keyCount} keys`);
    }
    read.set(name, { name, keyCount, lua, sha: createHash('sha1').update(lua).digest('hex'), readOnly: READ_ONLY.test(source) });
  }
  scripts = read;
  folders.set(dir.href, scripts);
  return scripts;
}

function withIncludes(dir: URL, source: string, included: Set<string>): string {
  return source.replace(INCLUDE, (_line, name: string) => {
    if (included.has(name)) return '';
    included.add(name);
    return withIncludes(dir, readFileSync(new URL(`includes/${name}.lua`, dir), 'utf8'), included).replace(/\n$/, '');
  });
}

function pick<Name extends string>(dir: URL, names: readonly Name[]): Script[] {
  const scripts = readFolder(dir);
  return names.map((name) => {
    const script = scripts.get(name);
    if (!script) throw new Error(`No Lua script ${name}-<keys>.lua in ${dir.pathname}`);
    return script;
  });
}

function checkKeys(script: Script, keys: readonly string[]): void {
  if (keys.length !== script.keyCount) throw new Error(`Script ${script.name} takes ${script.keyCount} keys, not ${keys.length}`);
}

/**
 * A runner per named script of `dir`: EVALSHA, and EVAL when Redis answers NOSCRIPT (a restart or
 * a failover emptied its script cache; EVAL caches the script again). A call with another number
 * of keys than the file name declares throws before anything is sent.
 *
 * Not ioredis's defineCommand: every pipeline ioredis builds copies each defined command onto
 * itself, which made a tasks/get allocate ~2 KiB that outlived young-generation collections
 * (docs/decisions/0008-redis-writes.md).
 */
export function loadScripts<Name extends string>(redis: RedisConnection, dir: URL, names: readonly Name[]): Record<Name, RunKeysScript> {
  const entries = pick(dir, names).map((script): [string, RunKeysScript] => {
    const [evalSha, evalLua] = script.readOnly ? ['evalsha_ro', 'eval_ro'] : ['evalsha', 'eval'];
    return [
      script.name,
      (keys, args) => {
        checkKeys(script, keys);
        // EVALSHA names its keys after the count, so a Cluster routes it by the first key.
        return send(redis, evalSha, script.sha, keys, args).catch((err: unknown) => {
          if (err instanceof ReplyError && (err as Error).message.startsWith('NOSCRIPT')) return send(redis, evalLua, script.lua, keys, args);
          throw err;
        });
      },
    ];
  });
  return Object.fromEntries(entries) as Record<Name, RunKeysScript>;
}

/**
 * A queuer per named script of `dir`, for scripts that run inside a MULTI. They go as EVAL with
 * their text: an EVALSHA answered NOSCRIPT inside a transaction fails alone while the other
 * commands apply, and neither sending the transaction again nor dropping the script is right.
 */
export function transactionScripts<Name extends string>(dir: URL, names: readonly Name[]): Record<Name, QueueScript> {
  const entries = pick(dir, names).map((script): [string, QueueScript] => [
    script.name,
    (transaction, keys, args) => {
      checkKeys(script, keys);
      transaction.eval(script.lua, keys.length, ...keys, ...args);
    },
  ]);
  return Object.fromEntries(entries) as Record<Name, QueueScript>;
}

/** `EVALSHA sha` or `EVAL lua`, then the keys' count, the keys and the arguments. */
function send(redis: RedisConnection, command: string, script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
  return redis.sendCommand(new FlatCommand(command, commandArgs([script, String(keys.length)], keys, args), { replyEncoding: 'utf8' })) as Promise<unknown>;
}
