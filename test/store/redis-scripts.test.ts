import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, disconnect, type RedisConnection } from '../../src/store/redis/connection.js';
import { loadScripts, transactionScripts } from '../../src/store/redis/scripts.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

const COMMON = 'local prefix = "v:"';
const ECHO_BODY = "redis.call('SET', KEYS[1], ARGV[1])\nreturn prefix .. redis.call('GET', KEYS[1])\n";
const ECHO = `--- @include "common"\n${ECHO_BODY}`;

/** A fresh script folder (the loader reads each folder once per process). */
function folder(files: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), 'mts-lua-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return pathToFileURL(`${dir}/`);
}

describe('the Lua script loader', () => {
  let server: RedisServer;
  let redis: RedisConnection;
  let admin: Redis;
  const dir = folder({
    'includes/common.lua': `${COMMON}\n`,
    'echo-1.lua': ECHO,
    'boom-1.lua': "return redis.error_reply('BOOM ' .. ARGV[1])\n",
    'pair-2.lua': "redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], ARGV[1])\nreturn 1\n",
    'peek-1.lua': "--- @read-only\nreturn redis.call('GET', KEYS[1])\n",
    'sneaky-write-1.lua': "--- @read-only\nreturn redis.call('SET', KEYS[1], 'x')\n",
  });

  beforeAll(async () => {
    server = await startRedis();
    redis = connect({ url: server.url }, 'commands');
    admin = new Redis(server.url);
  });

  afterAll(async () => {
    await disconnect(redis);
    admin.disconnect();
    await server.stop();
  });

  it('runs a script with its includes in place, by its SHA once Redis knows it', async () => {
    const scripts = loadScripts(redis, dir, ['echo']);
    expect(await scripts.echo(['k1'], ['one'])).toBe('v:one');
    const sha = createHash('sha1').update(`${COMMON}\n${ECHO_BODY}`).digest('hex');
    expect(await admin.script('EXISTS', sha)).toEqual([1]);
  });

  it('runs again after Redis forgot its scripts (a restart or SCRIPT FLUSH answers NOSCRIPT)', async () => {
    const scripts = loadScripts(redis, dir, ['echo']);
    await scripts.echo(['k2'], ['before']);
    await admin.script('FLUSH');
    expect(await scripts.echo(['k2'], ['after'])).toBe('v:after');
    expect(await admin.get('k2')).toBe('after');
  });

  it('passes a script error through as a Redis error', async () => {
    const scripts = loadScripts(redis, dir, ['boom']);
    await expect(scripts.boom(['k3'], ['now'])).rejects.toThrow(/BOOM now/);
  });

  it('refuses a call whose number of keys disagrees with the file name, before sending anything', () => {
    const scripts = loadScripts(redis, dir, ['echo', 'pair']);
    expect(() => scripts.echo(['a', 'b'], ['x'])).toThrow('Script echo takes 1 keys, not 2');
    expect(() => scripts.pair(['a'], ['x'])).toThrow('Script pair takes 2 keys, not 1');
  });

  it('runs a script marked read-only as EVALSHA_RO, where Redis refuses a write', async () => {
    const scripts = loadScripts(redis, dir, ['peek', 'sneaky-write']);
    await admin.set('k4', 'seen');
    expect(await scripts.peek(['k4'], [])).toBe('seen');
    await expect(scripts['sneaky-write'](['k4'], [])).rejects.toThrow(/[Ww]rite commands are not allowed from read-only scripts/);
    expect(await admin.get('k4')).toBe('seen');
  });

  it('queues a script into a MULTI that still runs after SCRIPT FLUSH', async () => {
    const { pair } = transactionScripts(dir, ['pair']);
    await admin.script('FLUSH');
    const multi = redis.multi();
    multi.set('k5', 'first');
    pair(multi, ['k5', 'k6'], ['both']);
    const replies = await multi.exec();
    expect(replies?.map(([error]) => error)).toEqual([null, null]);
    expect(await admin.mget('k5', 'k6')).toEqual(['both', 'both']);
    expect(() => pair(redis.multi(), ['k5'], ['x'])).toThrow('Script pair takes 2 keys, not 1');
  });

  it('refuses a script file not named with its key count', () => {
    const bad = folder({ 'take.lua': 'return 1\n' });
    expect(() => loadScripts(redis, bad, [])).toThrow('Lua script take.lua in');
    expect(() => loadScripts(redis, bad, [])).toThrow('is not named <name>-<number of keys>.lua');
  });

  it('refuses a script that reads a key beyond the count its file name declares, includes too', () => {
    const direct = folder({ 'take-2.lua': "return redis.call('GET', KEYS[3])\n" });
    expect(() => loadScripts(redis, direct, ['take'])).toThrow('Lua script take-2.lua reads KEYS[3] but its file name declares 2 keys');
    const included = folder({ 'includes/common.lua': 'local k = KEYS[2]\n', 'take-1.lua': '--- @include "common"\nreturn k\n' });
    expect(() => loadScripts(redis, included, ['take'])).toThrow('reads KEYS[2] but its file name declares 1 keys');
  });

  it('refuses two files for one script name, and a name without a file', () => {
    expect(() => loadScripts(redis, folder({ 'take-1.lua': 'return 1\n', 'take-2.lua': 'return 2\n' }), ['take'])).toThrow('has two files');
    expect(() => loadScripts(redis, dir, ['missing'])).toThrow('No Lua script missing-<keys>.lua');
  });

  it('includes a shared include once, however many includes pull it in', async () => {
    const shared = folder({
      'includes/base.lua': 'local n = 0\n',
      'includes/one.lua': '--- @include "base"\nn = n + 1\n',
      'includes/two.lua': '--- @include "base"\nn = n + 10\n',
      'count-1.lua': '--- @include "one"\n--- @include "two"\nreturn n\n',
    });
    expect(await loadScripts(redis, shared, ['count']).count(['k7'], [])).toBe(11);
  });
});
