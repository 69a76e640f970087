import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../support/demo-upstream-process.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { pollUntil } from '../support/sep2663-client.js';
import { startShimProcess } from '../support/shim-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let redis: RedisServer;
let upstream: DemoUpstreamProcess;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedis(), spawnDemoUpstream()]);
});

afterAll(async () => {
  upstream?.killGroup();
  await upstream?.exited;
  await redis?.stop();
});

describe('the start-up lines', () => {
  it('say the version, upstream, store and auth mode', async () => {
    const shim = await startShimProcess({ upstreamUrl: upstream.url, redisUrl: redis.url, args: ['--auth', 'none'] });
    try {
      const out = await pollUntil(async () => shim.stdout(), (text) => text.includes('  auth:'), { timeoutMs: 5_000, intervalMs: 50 });
      expect(out).toMatch(/^ {2}version: {2}\d+\.\d+\.\d+/m);
      expect(out).toContain(`  upstream: ${upstream.url}\n`);
      expect(out).toContain(`  store:    redis ${redis.url}\n`);
      expect(out).toContain('  auth:     none\n');
    } finally {
      await shim.stop();
    }
  });

  it('name the Redis URL without its password, the wait and what to check when Redis does not answer', async () => {
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/mcp-tasks-shim.js', 'serve', '--upstream', upstream.url, '--port', '0', '--redis', 'redis://:hunter2-secret@127.0.0.1:1'],
        { cwd: ROOT, timeout: 25_000 },
        (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(code).toBe(1);
    expect(stderr).toContain('cannot start: Redis at redis://***@127.0.0.1:1 did not answer within 10 s.');
    expect(stderr).toContain('Check that Redis runs and listens there');
    expect(stderr).not.toContain('hunter2-secret');
  });
});
