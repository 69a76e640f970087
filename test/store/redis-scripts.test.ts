import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, disconnect, type RedisConnection } from '../../src/store/redis/connection.js';
import { defineScripts } from '../../src/store/redis/scripts.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

const COMMON = 'local prefix = "v:"\n';
const ECHO = "redis.call('SET', KEYS[1], ARGV[1])\nreturn prefix .. redis.call('GET', KEYS[1])\n";

describe('defineScripts', () => {
  let server: RedisServer;
  let redis: RedisConnection;
  let admin: Redis;
  const dir = mkdtempSync(join(tmpdir(), 'mts-lua-'));
  writeFileSync(join(dir, 'common.lua'), COMMON);
  writeFileSync(join(dir, 'echo.lua'), ECHO);
  writeFileSync(join(dir, 'boom.lua'), "return redis.error_reply('BOOM ' .. ARGV[1])\n");
  const set = { dir: pathToFileURL(`${dir}/`), names: ['echo', 'boom'] as const, common: true };

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

  it('runs each script with the common prelude, by its SHA once Redis knows it', async () => {
    const scripts = defineScripts(redis, set);
    expect(await scripts.echo(['k1'], ['one'])).toBe('v:one');
    const sha = createHash('sha1').update(COMMON + ECHO).digest('hex');
    expect(await admin.script('EXISTS', sha)).toEqual([1]);
  });

  it('runs again after Redis forgot its scripts (a restart or SCRIPT FLUSH answers NOSCRIPT)', async () => {
    const scripts = defineScripts(redis, set);
    await scripts.echo(['k2'], ['before']);
    await admin.script('FLUSH');
    expect(await scripts.echo(['k2'], ['after'])).toBe('v:after');
    expect(await admin.get('k2')).toBe('after');
  });

  it('passes a script error through as a Redis error', async () => {
    const scripts = defineScripts(redis, set);
    await expect(scripts.boom(['k3'], ['now'])).rejects.toThrow(/BOOM now/);
  });

  it('refuses a call with the wrong number of keys before sending anything', () => {
    const scripts = defineScripts(redis, set);
    expect(() => scripts.echo(['a', 'b'], ['x'])).toThrow('Script echo takes 1 keys, not 2');
  });
});
