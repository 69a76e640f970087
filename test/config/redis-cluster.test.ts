import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configProblems as problems } from '../support/config-problems.js';

const SEEDS = 'redis://127.0.0.1:7000,redis://127.0.0.1:7001';

describe('Redis Cluster configuration', () => {
  it('is off by default', () => {
    expect(loadConfig({ argv: ['--redis', 'redis://127.0.0.1:6379'], env: {} }).config.redisCluster).toBe(false);
  });

  it('takes seed URLs with SHIM_REDIS_CLUSTER=true or --redis-cluster', () => {
    expect(loadConfig({ argv: [], env: { REDIS_URL: SEEDS, SHIM_REDIS_CLUSTER: 'true' } }).config).toMatchObject({ redisUrl: SEEDS, redisCluster: true });
    expect(loadConfig({ argv: ['--redis', SEEDS, '--redis-cluster'], env: {} }).config.redisCluster).toBe(true);
    expect(loadConfig({ argv: ['--redis', 'redis://127.0.0.1:7000', '--redis-cluster'], env: {} }).config.redisCluster).toBe(true);
  });

  it('refuses several URLs without the cluster setting', () => {
    expect(problems(['--redis', SEEDS])).toEqual(['--redis: several URLs are seed nodes of a Redis Cluster: set --redis-cluster (SHIM_REDIS_CLUSTER=true) too']);
  });

  it('refuses the cluster setting without any URL', () => {
    expect(problems(['--redis-cluster'])).toEqual(['--redis-cluster: a Redis Cluster needs its seed node URLs in --redis or REDIS_URL']);
  });

  it('names the seed that is not a redis URL', () => {
    expect(problems(['--redis', 'redis://127.0.0.1:7000,http://127.0.0.1:7001', '--redis-cluster'])).toEqual([
      "--redis: seed 'http://127.0.0.1:7001' must be a redis:// or rediss:// URL",
    ]);
  });

  it('refuses a SHIM_REDIS_CLUSTER that is not a boolean', () => {
    expect(problems([], { REDIS_URL: SEEDS, SHIM_REDIS_CLUSTER: 'maybe' })).toEqual([
      'SHIM_REDIS_CLUSTER: expected true or false, got "maybe"',
      'REDIS_URL: several URLs are seed nodes of a Redis Cluster: set --redis-cluster (SHIM_REDIS_CLUSTER=true) too',
    ]);
  });
});
