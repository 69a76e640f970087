import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession } from '../../support/legacy-client.js';
import { Sep2663Client, textOf } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { hsKey, SECRET, sign } from '../../http/auth/support.js';

const FILE_TOKEN = 'file-token-that-must-never-be-stored-42';
const dir = mkdtempSync(join(tmpdir(), 'mts-token-scan-'));
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [FILE_TOKEN]: 'alice' }));

const stack = useStack({ stores: [] });

/** Every key of the Redis server and every value under it, whatever its type, as one text. */
async function dumpRedis(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const parts: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        parts.push(key);
        // Gone between SCAN and TYPE (a stream's short-lived key expired or was deleted): its name is all it had.
        if (type === 'none') continue;
        if (type === 'string') parts.push((await redis.get(key)) ?? '');
        else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES')));
        else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
        else throw new Error(`unexpected Redis type ${type} of ${key}`);
      }
    } while (cursor !== '0');
    return parts.join('\n');
  } finally {
    redis.disconnect();
  }
}

/** A task with input on SEP-2663, a legacy session with a task-augmented call and a GET stream. */
async function taskFlows(url: string, token: string): Promise<void> {
  const modern = new Sep2663Client(url, { token });
  const created = await modern.createTask('confirm_delete', { filename: 'scan.txt' });
  const asked = await modern.waitForStatus(created.taskId, 'input_required');
  const key = Object.keys(asked.inputRequests)[0] as string;
  await modern.result('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { confirm: true } } } });
  expect(textOf((await modern.waitForStatus(created.taskId, 'completed')).result)).toBe('Deleted scan.txt');

  const session = await LegacySession.open(url, { token });
  const stream = session.openGetStream();
  await stream.next((e) => e.id !== undefined);
  const task = (await session.result('tools/call', { name: 'failing_job', arguments: {}, task: { ttl: 60_000 } })).task;
  await modern.waitForStatus(task.taskId, 'completed');
  expect((await session.result('tasks/result', { taskId: task.taskId })).isError).toBe(true);
  stream.close();
}

describe('bearer tokens are never stored', () => {
  let tokensShim: ShimProcess;
  let jwtShim: ShimProcess;
  beforeAll(async () => {
    [tokensShim, jwtShim] = await Promise.all([
      stack.startShim({ args: ['--tokens', tokensFile] }),
      stack.startShim({ env: { SHIM_JWT_SECRET: SECRET } }),
    ]);
  });

  it('finds no trace of a tokens-file token or a JWT anywhere in Redis after full task flows', async () => {
    const jwt = await sign(hsKey(), 'HS256', { sub: 'bob' });
    await taskFlows(tokensShim.url, FILE_TOKEN);
    await taskFlows(jwtShim.url, jwt);

    const dump = await dumpRedis(stack.redis.url);
    // The flows did leave their records: the scan looked where the tokens would be.
    expect(dump).toContain('alice');
    expect(dump).toContain('bob');
    expect(dump).toContain('scan.txt');
    expect(dump).not.toContain(FILE_TOKEN);
    expect(dump).not.toContain(jwt);
    expect(dump).not.toContain(jwt.split('.')[2] as string);
  });
});
